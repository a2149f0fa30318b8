// Leaderboard filters <-> URL search params, so every view is a link. Filters combine: the API
// serves one stored board per language x kind x task-date window (and tournament), ranked by a
// role if one is chosen.

import type { paths } from "../api/schema";

type Query = NonNullable<paths["/api/leaderboard"]["get"]["parameters"]["query"]>;
type Choices<K extends keyof Query> = NonNullable<Query[K]>;
/** `true` only when `Listed` names every value the API's schema allows, so a language (or
 * role, kind) added to the API fails the type check here until the menus offer it. */
type Complete<All, Listed extends readonly All[]> = [Exclude<All, Listed[number]>] extends [never]
  ? true
  : false;

export const LANGUAGES = ["python", "go", "rust", "cpp", "java"] as const satisfies readonly Choices<
  "language"
>[];
export const KINDS = ["gold-judged", "ci-judged"] as const satisfies readonly Choices<"kind">[];
export const ROLES = ["submitter", "reviewer"] as const satisfies readonly Choices<"role">[];
export const MENUS_ARE_COMPLETE: [
  Complete<Choices<"language">, typeof LANGUAGES>,
  Complete<Choices<"kind">, typeof KINDS>,
  Complete<Choices<"role">, typeof ROLES>,
] = [true, true, true];

export type BoardFilters = {
  language?: (typeof LANGUAGES)[number];
  role?: (typeof ROLES)[number];
  kind?: (typeof KINDS)[number];
  after_cutoff?: true; // tasks opened after both models' knowledge cutoffs
  created_after?: string; // YYYY-MM-DD: tasks opened after this day
  tournament?: number;
  sort: string;
  desc: boolean;
};

/** The filters that choose the board, in the order the URL and labels show them. */
const KEYS = ["language", "role", "kind", "after_cutoff", "created_after", "tournament"] as const;

const oneOf = <T extends string>(allowed: readonly T[], v: string | null): T | undefined =>
  v !== null && (allowed as readonly string[]).includes(v) ? (v as T) : undefined;

export function parseFilters(params: URLSearchParams): BoardFilters {
  const tournament = Number(params.get("tournament"));
  const after = params.get("created_after");
  const cutoff = params.get("after_cutoff") === "1" ? true : undefined;
  return {
    language: oneOf(LANGUAGES, params.get("language")),
    role: oneOf(ROLES, params.get("role")),
    kind: oneOf(KINDS, params.get("kind")),
    after_cutoff: cutoff,
    // one task-date window at a time (the API refuses both): each model's cutoff wins
    created_after: !cutoff && after && /^\d{4}-\d{2}-\d{2}$/.test(after) ? after : undefined,
    tournament: Number.isInteger(tournament) && tournament > 0 ? tournament : undefined,
    sort: params.get("sort") ?? "rating",
    desc: params.get("desc") !== "0",
  };
}

export function filtersToParams(f: BoardFilters): URLSearchParams {
  const p = new URLSearchParams();
  for (const k of KEYS) if (f[k] !== undefined) p.set(k, k === "after_cutoff" ? "1" : String(f[k]));
  if (f.sort !== "rating") p.set("sort", f.sort);
  if (!f.desc) p.set("desc", "0");
  return p;
}

export type Window = "" | "cutoff" | "date";

/** Sets the task-date window: none, each model's cutoff, or a day (kept if already set). */
export function withWindow(f: BoardFilters, window: Window, day?: string): BoardFilters {
  return {
    ...f,
    after_cutoff: window === "cutoff" ? true : undefined,
    created_after: window === "date" ? day || f.created_after || "2025-01-01" : undefined,
  };
}

export const windowOf = (f: BoardFilters): Window => (f.after_cutoff ? "cutoff" : f.created_after ? "date" : "");

/** The query the API gets for these filters (sorting stays in the page). */
export function apiQuery(f: BoardFilters) {
  return {
    language: f.language,
    role: f.role,
    kind: f.kind,
    after_cutoff: f.after_cutoff,
    created_after: f.created_after,
    tournament: f.tournament,
  };
}

/** A file-name-safe label of the filters, for exports. */
export function scopeLabel(f: BoardFilters): string {
  const parts = KEYS.filter((k) => f[k] !== undefined).map((k) => (k === "after_cutoff" ? k : `${k}=${f[k]}`));
  return parts.join("_") || "overall";
}
