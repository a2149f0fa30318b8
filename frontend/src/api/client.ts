// The one way pages talk to the server: a client typed from openapi.json (see `npm run gen`).
import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./schema";

export type Schemas = components["schemas"];
export type ModelOut = Schemas["ModelOut"];
export type LeaderboardRow = Schemas["LeaderboardRow"];
export type Leaderboard = Schemas["Leaderboard"];
export type Matrix = Schemas["Matrix"];
export type MatchSummary = Schemas["MatchSummary"];
export type MatchEvidence = Schemas["MatchEvidence"];
export type RoundEvidence = Schemas["RoundEvidence"];
export type AnswerEvidence = Schemas["AnswerEvidence"];
export type TournamentOut = Schemas["TournamentOut"];
export type TaskSummary = Schemas["TaskSummary"];
export type TaskDetail = Schemas["TaskDetail"];
export type ImportReport = Schemas["ImportReport"];
export type CorpusReport = Schemas["CorpusReportOut"];

const TOKEN_KEY = "arena.adminToken";

/** The admin token lives in session storage: typed once, gone when the tab closes. */
export const adminToken = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token),
  clear: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

/** A failed request, with the server's own words when it gave any (FastAPI `detail`). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

type Detail = { loc?: (string | number)[]; msg?: string };

export function describeError(status: number, body: unknown): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === "string") return `${status}: ${detail}`;
  if (Array.isArray(detail)) {
    const parts = (detail as Detail[]).map((d) =>
      [d.loc?.filter((l) => l !== "body").join("."), d.msg].filter(Boolean).join(": "),
    );
    return `${status}: ${parts.join("; ")}`;
  }
  if (status === 401) return "401: the admin token is missing or wrong";
  return `${status}: the server answered with an error`;
}

const auth: Middleware = {
  onRequest({ request }) {
    const token = adminToken.get();
    if (token && request.method !== "GET") request.headers.set("Authorization", `Bearer ${token}`);
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: new URL(".", window.location.href).href.replace(/\/$/, "") });
api.use(auth);

/** Unwraps an openapi-fetch result: data, or an ApiError naming the problem. A down server says so. */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch {
    throw new ApiError("The Arena API cannot be reached: is the server running?", null);
  }
  const { data, error, response } = result;
  if (!response.ok || data === undefined) {
    if (response.status >= 502 && response.status <= 504 && error === undefined) {
      throw new ApiError(`The Arena API is down (HTTP ${response.status}).`, response.status);
    }
    throw new ApiError(describeError(response.status, error), response.status);
  }
  return data;
}
