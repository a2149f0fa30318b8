// Corpus report filters <-> URL search params (`report_language`, `report_stage`, apart from the
// task list's own filters), and the export links the API serves for them.

export const STAGES = ["refused", "imported", "environment built", "validated", "playable"] as const;
export type Stage = (typeof STAGES)[number];

export type ReportFilters = { language?: string; stage?: Stage };

export const REPORT_KEYS = { language: "report_language", stage: "report_stage" } as const;

export function parseReportFilters(params: URLSearchParams): ReportFilters {
  const language = params.get(REPORT_KEYS.language)?.trim();
  const stage = params.get(REPORT_KEYS.stage);
  return {
    language: language && language.length <= 40 ? language : undefined,
    stage: STAGES.find((s) => s === stage),
  };
}

/** The API's query for these filters (the counts always cover the whole corpus). */
export const reportQuery = (f: ReportFilters) => ({ language: f.language, stage: f.stage });

/** `/api/tasks/report` for these filters, as JSON or as a CSV download, relative to `base`. */
export function reportExportUrl(base: string, f: ReportFilters, format: "json" | "csv"): string {
  const url = new URL("api/tasks/report", base);
  if (f.language) url.searchParams.set("language", f.language);
  if (f.stage) url.searchParams.set("stage", f.stage);
  if (format === "csv") url.searchParams.set("format", "csv");
  return url.href;
}
