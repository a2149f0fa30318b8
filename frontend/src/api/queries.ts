// Query hooks: one per read, keyed so pages share caches (TanStack Query).
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { adminToken, api, ApiError, unwrap, type CorpusReport } from "./client";
import type { paths } from "./schema";

// the leaderboard's query as the API's schema declares it (languages, roles, kinds included)
type BoardQuery = NonNullable<paths["/api/leaderboard"]["get"]["parameters"]["query"]>;

export const useLeaderboard = (query: BoardQuery, enabled = true) =>
  useQuery({
    queryKey: ["leaderboard", query],
    queryFn: () => unwrap(api.GET("/api/leaderboard", { params: { query } })),
    placeholderData: keepPreviousData,
    enabled,
  });

export const useMatrix = (query: Omit<BoardQuery, "role" | "after_cutoff" | "created_after">) =>
  useQuery({
    queryKey: ["matrix", query],
    queryFn: () => unwrap(api.GET("/api/leaderboard/matrix", { params: { query } })),
  });

export const useModels = (includeRetired = false) =>
  useQuery({
    queryKey: ["models", includeRetired],
    queryFn: () => unwrap(api.GET("/api/models", { params: { query: { include_retired: includeRetired } } })),
  });

export const useModel = (name: string) =>
  useQuery({
    queryKey: ["model", name],
    queryFn: () => unwrap(api.GET("/api/models/{name}", { params: { path: { name } } })),
  });

export type MatchQuery = NonNullable<paths["/api/matches"]["get"]["parameters"]["query"]>;

export const useMatches = (query: MatchQuery, refetchInterval: number | false = false) =>
  useQuery({
    queryKey: ["matches", query],
    queryFn: () => unwrap(api.GET("/api/matches", { params: { query } })),
    placeholderData: keepPreviousData,
    refetchInterval,
  });

/** A match; a finished one carries its gold fix, answers and logs for the admin (this tab's
 * token) only, unless the server publishes them. A refused token shows it as to anyone. */
export const useMatch = (id: number) => {
  const token = adminToken.get();
  return useQuery({
    queryKey: ["match", id, token !== null],
    queryFn: async () => {
      const params = { path: { match_id: id } };
      const read = (headers?: Record<string, string>) => api.GET("/api/matches/{match_id}", { params, headers });
      return (await asAdminIfAllowed(token, read)).data;
    },
  });
};

export const useTournaments = () =>
  useQuery({
    queryKey: ["tournaments"],
    queryFn: () => unwrap(api.GET("/api/tournaments", { params: { query: { limit: 100 } } })),
  });

export const useTournament = (id: number) =>
  useQuery({
    queryKey: ["tournament", id],
    queryFn: () =>
      unwrap(api.GET("/api/tournaments/{tournament_id}", { params: { path: { tournament_id: id } } })),
  });

export type TaskQuery = NonNullable<paths["/api/tasks"]["get"]["parameters"]["query"]>;

export const useTasks = (query: TaskQuery) =>
  useQuery({
    queryKey: ["tasks", query],
    queryFn: () =>
      unwrap(
        api.GET("/api/tasks", {
          params: { query: { ...query, limit: 200 } },
        }),
      ),
    placeholderData: keepPreviousData,
  });

/** A task; with the admin token of this tab (when there is one) it carries its gold patch and
 * tests. A token the server refuses (401) is reported and the task shown as to anyone. */
export const useTask = (id: string, enabled: boolean) => {
  const token = adminToken.get();
  return useQuery({
    queryKey: ["task", id, token !== null],
    queryFn: async () => {
      const params = { path: { instance_id: id } };
      const read = (headers?: Record<string, string>) => api.GET("/api/tasks/{instance_id}", { params, headers });
      const { data, tokenRefused } = await asAdminIfAllowed(token, read);
      return { task: data, tokenRefused };
    },
    enabled,
  });
};

/** A public read made with this tab's admin `token` when there is one (it shows the admin
 * more); a token the server refuses (401) is reported and the read made as anyone's. */
async function asAdminIfAllowed<T>(
  token: string | null,
  read: (headers?: Record<string, string>) => Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<{ data: T; tokenRefused: boolean }> {
  if (token) {
    try {
      return { data: await unwrap(read({ Authorization: `Bearer ${token}` })), tokenRefused: false };
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 401)) throw e;
    }
  }
  return { data: await unwrap(read()), tokenRefused: token !== null };
}

export const useHealth = () =>
  useQuery({
    queryKey: ["health"],
    queryFn: async () => {
      // 503 still carries the components' reasons: show them, do not throw them away
      const { data, error, response } = await api.GET("/api/health");
      return { ok: response.ok, body: data ?? (error as unknown) };
    },
    refetchInterval: 30_000,
    retry: false,
  });

export type ReportQuery = NonNullable<paths["/api/tasks/report"]["get"]["parameters"]["query"]>;

export const useCorpusReport = (query: Omit<ReportQuery, "format">) =>
  useQuery({
    queryKey: ["tasks", "report", query],
    // JSON: the CSV form (format=csv) is a download link, never fetched here
    queryFn: async () => (await unwrap(api.GET("/api/tasks/report", { params: { query } }))) as CorpusReport,
    placeholderData: keepPreviousData,
  });
