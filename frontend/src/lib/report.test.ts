import { describe, expect, it } from "vitest";
import { parseReportFilters, reportExportUrl, reportQuery } from "./report";

describe("corpus report filters in the URL", () => {
  it("read the report's own keys and ignore stages the API would refuse", () => {
    const f = parseReportFilters(new URLSearchParams("report_language=go&report_stage=environment%20built&language=rust"));
    expect(f).toEqual({ language: "go", stage: "environment built" });
    expect(parseReportFilters(new URLSearchParams("report_stage=done"))).toEqual({ language: undefined, stage: undefined });
    expect(reportQuery({})).toEqual({ language: undefined, stage: undefined });
  });
  it("export links carry the filters, CSV with format=csv", () => {
    const base = "http://host/arena/";
    expect(reportExportUrl(base, { language: "go", stage: "refused" }, "csv")).toBe(
      "http://host/arena/api/tasks/report?language=go&stage=refused&format=csv",
    );
    expect(reportExportUrl(base, {}, "json")).toBe("http://host/arena/api/tasks/report");
  });
});
