// The leaderboard: ratings with intervals, filters and sorting in the URL, export of what is shown.
import {
  createColumnHelper,
  flexRender,
  getCoreRowModel,
  getSortedRowModel,
  useReactTable,
  type SortingState,
} from "@tanstack/react-table";
import { useMemo } from "react";
import { Link, useSearchParams } from "react-router";
import type { LeaderboardRow, ModelOut } from "../api/client";
import { useLeaderboard, useModels, useTournaments } from "../api/queries";
import { IntervalBar, scaleOf, type Scale } from "../components/IntervalBar";
import { RatingsChart } from "../components/RatingsChart";
import { Empty, ErrorBox, Loading } from "../components/Status";
import { download, toCsv, type Cell } from "../lib/csv";
import {
  apiQuery,
  filtersToParams,
  KINDS,
  LANGUAGES,
  parseFilters,
  ROLES,
  scopeLabel,
  withScope,
  type BoardFilters,
} from "../lib/filters";
import { num, secs, usd, when } from "../lib/format";

export type BoardRow = LeaderboardRow & {
  submitter_rating: number | null;
  reviewer_rating: number | null;
  organization: string | null;
  license: string | null;
};

/** Joins the scope's rows with per-role ratings and each model's metadata. */
export function boardRows(
  rows: LeaderboardRow[],
  models: ModelOut[] | undefined,
  submitter: LeaderboardRow[] | undefined,
  reviewer: LeaderboardRow[] | undefined,
): BoardRow[] {
  const meta = new Map((models ?? []).map((m) => [m.name, m]));
  const role = (list: LeaderboardRow[] | undefined) => new Map((list ?? []).map((r) => [r.model, r.rating]));
  const sub = role(submitter);
  const rev = role(reviewer);
  return rows.map((r) => ({
    ...r,
    submitter_rating: sub.get(r.model) ?? null,
    reviewer_rating: rev.get(r.model) ?? null,
    organization: meta.get(r.model)?.organization ?? null,
    license: meta.get(r.model)?.license ?? null,
  }));
}

/** What export writes: the rows as the table shows them, in its order. */
export const EXPORT_COLUMNS: (keyof BoardRow)[] = [
  "rank_ub", "model", "rating", "ci_low", "ci_high", "matches", "wins", "losses", "ties", "elo",
  "submitter_rating", "reviewer_rating", "cost", "latency", "organization", "license",
];

const col = createColumnHelper<BoardRow>();

function columns(scale: Scale) {
  return [
    col.accessor("rank_ub", { header: "Rank (UB)", cell: (c) => c.getValue() ?? "–" }),
    col.accessor("model", {
      header: "Model",
      cell: (c) => <Link to={`/models/${encodeURIComponent(c.getValue())}`}>{c.getValue()}</Link>,
    }),
    col.accessor("rating", {
      header: "Rating (95% CI)",
      cell: (c) => {
        const r = c.row.original;
        return (
          <div className="rating-cell">
            <span className="rating-num">{num(r.rating)}</span>
            <span className="ci">
              {r.ci_low !== null ? `${num(r.ci_low)}–${num(r.ci_high)}` : ""}
            </span>
            <IntervalBar low={r.ci_low} high={r.ci_high} value={r.rating} scale={scale} />
          </div>
        );
      },
    }),
    col.accessor("matches", { header: "Matches", cell: (c) => c.getValue() ?? "–" }),
    col.accessor((r) => r.wins, {
      id: "wlt",
      header: "W / L / T",
      cell: (c) => {
        const r = c.row.original;
        return r.wins === null ? "–" : `${r.wins} / ${r.losses} / ${r.ties}`;
      },
    }),
    col.accessor("elo", { header: "Elo", cell: (c) => num(c.getValue()) }),
    col.accessor("submitter_rating", { header: "As submitter", cell: (c) => num(c.getValue()) }),
    col.accessor("reviewer_rating", { header: "As reviewer", cell: (c) => num(c.getValue()) }),
    col.accessor("cost", { header: "Cost", cell: (c) => usd(c.getValue()) }),
    col.accessor("latency", { header: "Latency", cell: (c) => secs(c.getValue()) }),
    col.accessor("organization", { header: "Organization", cell: (c) => c.getValue() ?? "–" }),
    col.accessor("license", { header: "Licence", cell: (c) => c.getValue() ?? "–" }),
  ];
}

function Filters({ f, set, cutoffs }: { f: BoardFilters; set: (f: BoardFilters) => void; cutoffs: string[] }) {
  const tournaments = useTournaments();
  return (
    <form className="filters" aria-label="Leaderboard filters" onSubmit={(e) => e.preventDefault()}>
      <label>
        Language
        <select value={f.language ?? ""} onChange={(e) => set(withScope(f, "language", e.target.value))}>
          <option value="">all</option>
          {LANGUAGES.map((l) => <option key={l}>{l}</option>)}
        </select>
      </label>
      <label>
        Role
        <select value={f.role ?? ""} onChange={(e) => set(withScope(f, "role", e.target.value))}>
          <option value="">both</option>
          {ROLES.map((l) => <option key={l}>{l}</option>)}
        </select>
      </label>
      <label>
        Task kind
        <select value={f.kind ?? ""} onChange={(e) => set(withScope(f, "kind", e.target.value))}>
          <option value="">all</option>
          {KINDS.map((l) => <option key={l}>{l}</option>)}
        </select>
      </label>
      <label title="Only tasks whose issue was opened after this day: after a model's knowledge cutoff, it cannot have seen the fix">
        Tasks created after
        <input
          type="date"
          list="cutoffs"
          value={f.created_after ?? ""}
          onChange={(e) => set(withScope(f, "created_after", e.target.value))}
        />
        <datalist id="cutoffs">{cutoffs.map((c) => <option key={c} value={c} />)}</datalist>
      </label>
      <label>
        Tournament
        <select
          value={f.tournament ?? ""}
          onChange={(e) => set({ ...f, tournament: e.target.value ? Number(e.target.value) : undefined })}
        >
          <option value="">all</option>
          {(tournaments.data?.tournaments ?? []).map((t) => (
            <option key={t.id} value={t.id}>#{t.id} ({t.models.length} models, {t.status})</option>
          ))}
          {f.tournament !== undefined && !tournaments.data?.tournaments.some((t) => t.id === f.tournament) && (
            <option value={f.tournament}>#{f.tournament}</option>
          )}
        </select>
      </label>
      <p className="hint">The API rates one scope at a time: choosing a language, role, kind or date clears the others.</p>
    </form>
  );
}

export function LeaderboardPage() {
  const [params, setParams] = useSearchParams();
  const f = parseFilters(params);
  const set = (next: BoardFilters) => setParams(filtersToParams(next));
  const board = useLeaderboard(apiQuery(f));
  const overall = !f.language && !f.kind && !f.role && !f.created_after;
  const submitter = useLeaderboard({ role: "submitter", tournament: f.tournament }, overall);
  const reviewer = useLeaderboard({ role: "reviewer", tournament: f.tournament }, overall);
  const models = useModels(true);
  const rows = useMemo(
    () => boardRows(board.data?.rows ?? [], models.data?.models, overall ? submitter.data?.rows : undefined, overall ? reviewer.data?.rows : undefined),
    [board.data, models.data, submitter.data, reviewer.data, overall],
  );
  const scale = useMemo(() => scaleOf(rows.flatMap((r) => [r.ci_low, r.ci_high, r.rating])), [rows]);
  const cols = useMemo(() => columns(scale), [scale]);
  // controlled table state must keep its identity between renders: a new array each render
  // makes the table reset its paging, which renders again, forever (starving URL updates)
  const sorting: SortingState = useMemo(() => [{ id: f.sort, desc: f.desc }], [f.sort, f.desc]);
  const table = useReactTable({
    data: rows,
    columns: cols,
    state: { sorting },
    onSortingChange: (updater) => {
      const next = typeof updater === "function" ? updater(sorting) : updater;
      const first = next[0];
      set({ ...f, sort: first?.id ?? "rating", desc: first?.desc ?? true });
    },
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
    sortDescFirst: true,
    autoResetPageIndex: false,
  });
  const sortedRows = table.getRowModel().rows;
  const shown = useMemo(() => sortedRows.map((r) => r.original), [sortedRows]);
  const cutoffs = [...new Set((models.data?.models ?? []).map((m) => m.knowledge_cutoff).filter((c): c is string => !!c))].sort();

  const exportAs = (format: "csv" | "json") => {
    const name = `arena-leaderboard-${scopeLabel(f)}.${format}`;
    if (format === "json") {
      const picked = shown.map((r) => Object.fromEntries(EXPORT_COLUMNS.map((c) => [c, r[c]])));
      download(name, JSON.stringify(picked, null, 2), "application/json");
    } else {
      download(name, toCsv(EXPORT_COLUMNS, shown.map((r) => EXPORT_COLUMNS.map((c) => r[c] as Cell))), "text/csv");
    }
  };

  return (
    <>
      <h1>Leaderboard</h1>
      <Filters f={f} set={set} cutoffs={cutoffs} />
      {board.isPending ? (
        <Loading what="the leaderboard" />
      ) : board.error || !board.data ? (
        <ErrorBox error={board.error} retry={() => void board.refetch()} />
      ) : (
        <>
          <p className="snapshot">
            Snapshot <strong>{board.data.computed_at ? when(board.data.computed_at) : "not computed yet"}</strong>{" "}
            over <strong data-testid="match-count">{board.data.match_count}</strong> matches ({board.data.scope}
            {board.data.scope_value ? ` ${board.data.scope_value}` : ""}
            {board.data.tournament ? `, tournament #${board.data.tournament}` : ""}).{" "}
            <span className="export">
              Export <button type="button" onClick={() => exportAs("csv")}>CSV</button>{" "}
              <button type="button" onClick={() => exportAs("json")}>JSON</button>{" "}
              <a href={`api/results.jsonl${f.tournament ? `?tournament=${f.tournament}` : ""}`}>all results (JSONL)</a>
            </span>
          </p>
          {rows.length === 0 ? (
            <Empty>
              {board.data.computed_at === null && f.created_after
                ? "This date window is being rated by a worker: reload in a moment."
                : "No ratings in this scope yet: run a tournament."}
            </Empty>
          ) : (
            <div className="board">
              <div className="table-wrap">
                <table className="leaderboard" aria-label="Ratings">
                  <thead>
                    {table.getHeaderGroups().map((g) => (
                      <tr key={g.id}>
                        {g.headers.map((h) => {
                          const dir = h.column.getIsSorted();
                          return (
                            <th key={h.id} aria-sort={dir === "asc" ? "ascending" : dir === "desc" ? "descending" : "none"}>
                              <button type="button" onClick={h.column.getToggleSortingHandler()}>
                                {flexRender(h.column.columnDef.header, h.getContext())}
                                {dir === "asc" ? " ▲" : dir === "desc" ? " ▼" : ""}
                              </button>
                            </th>
                          );
                        })}
                      </tr>
                    ))}
                  </thead>
                  <tbody>
                    {table.getRowModel().rows.map((row) => (
                      <tr key={row.id}>
                        {row.getVisibleCells().map((cell) => (
                          <td key={cell.id} data-col={cell.column.id}>
                            {flexRender(cell.column.columnDef.cell, cell.getContext())}
                          </td>
                        ))}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <RatingsChart rows={shown} />
            </div>
          )}
        </>
      )}
    </>
  );
}
