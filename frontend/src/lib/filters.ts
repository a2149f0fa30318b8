// Leaderboard filters <-> URL search params, so every view is a link. The API takes one scope
// (language, role, kind or a task-date window) at a time, plus an optional tournament.

export const LANGUAGES = ["python", "go", "rust", "cpp"] as const;
export const KINDS = ["gold-judged", "ci-judged"] as const;
export const ROLES = ["submitter", "reviewer"] as const;
export const SCOPES = ["language", "role", "kind", "created_after"] as const;

export type Scope = (typeof SCOPES)[number];

export type BoardFilters = {
  language?: (typeof LANGUAGES)[number];
  role?: (typeof ROLES)[number];
  kind?: (typeof KINDS)[number];
  created_after?: string; // YYYY-MM-DD
  tournament?: number;
  sort: string;
  desc: boolean;
};

const oneOf = <T extends string>(allowed: readonly T[], v: string | null): T | undefined =>
  v !== null && (allowed as readonly string[]).includes(v) ? (v as T) : undefined;

export function parseFilters(params: URLSearchParams): BoardFilters {
  const tournament = Number(params.get("tournament"));
  const after = params.get("created_after");
  const found: BoardFilters = {
    language: oneOf(LANGUAGES, params.get("language")),
    role: oneOf(ROLES, params.get("role")),
    kind: oneOf(KINDS, params.get("kind")),
    created_after: after && /^\d{4}-\d{2}-\d{2}$/.test(after) ? after : undefined,
    tournament: Number.isInteger(tournament) && tournament > 0 ? tournament : undefined,
    sort: params.get("sort") ?? "rating",
    desc: params.get("desc") !== "0",
  };
  // one scope at a time, as the API requires: the first given wins
  const first = SCOPES.find((s) => found[s] !== undefined);
  for (const s of SCOPES) if (s !== first) found[s] = undefined;
  return found;
}

export function filtersToParams(f: BoardFilters): URLSearchParams {
  const p = new URLSearchParams();
  for (const s of SCOPES) if (f[s] !== undefined) p.set(s, String(f[s]));
  if (f.tournament !== undefined) p.set("tournament", String(f.tournament));
  if (f.sort !== "rating") p.set("sort", f.sort);
  if (!f.desc) p.set("desc", "0");
  return p;
}

/** Sets one scope and clears the others (the API takes one). */
export function withScope(f: BoardFilters, scope: Scope, value: string | undefined): BoardFilters {
  const next: BoardFilters = { ...f };
  for (const s of SCOPES) next[s] = undefined;
  if (value) (next as Record<string, unknown>)[scope] = value;
  return parseFilters(filtersToParams(next));
}

/** The query the API gets for these filters (sorting stays in the page). */
export function apiQuery(f: BoardFilters) {
  return {
    language: f.language,
    role: f.role,
    kind: f.kind,
    created_after: f.created_after,
    tournament: f.tournament,
  };
}

export function scopeLabel(f: BoardFilters): string {
  const parts = SCOPES.filter((s) => f[s] !== undefined).map((s) => `${s}=${f[s]}`);
  if (f.tournament !== undefined) parts.push(`tournament=${f.tournament}`);
  return parts.join("_") || "overall";
}
