// The leaderboard: ratings with intervals, filters and sorting in the URL, export of what is shown.
import {
  createColumnHelper,
  flexRender,
  getCoreRowModel,
  getSortedRowModel,
  useReactTable,
  type SortingState,
} from "@tanstack/react-table";
import { useMemo, useRef } from "react";
import { Link, useSearchParams } from "react-router";
import type { Leaderboard, LeaderboardRow } from "../api/client";
import { goalText, type Goal } from "../lib/adaptive";
import { useLeaderboard, useTournaments } from "../api/queries";
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
  windowOf,
  withWindow,
  type BoardFilters,
  type Window,
} from "../lib/filters";
import { num, rate, secs, usd, when } from "../lib/format";

export type BoardRow = LeaderboardRow;

/** What export writes: the rows as the table shows them, in its order. */
export const EXPORT_COLUMNS: (keyof BoardRow)[] = [
  "rank_ub", "model", "rating", "ci_low", "ci_high", "provisional", "matches", "wins", "losses", "ties", "elo",
  "submitter", "reviewer", "patch_correct", "rounds_submitted", "tests_valid", "rounds_reviewed",
  "catch", "wrong_patches_reviewed", "draw", "rounds", "cost", "latency", "organization", "license", "knowledge_cutoff",
];

/** What one point of narrowing its interval (from the prior's width) cost: tokens, CI time
 * and money, each where known. */
export function perPointText(r: BoardRow): string {
  const p = r.per_point;
  if (!p) return "–";
  return [
    `${Math.round(p.tokens).toLocaleString("en-US")} tok`,
    p.ci_seconds == null ? null : `${num(p.ci_seconds, 1)} CI s`,
    p.cost == null ? null : usd(p.cost),
  ].filter((x) => x !== null).join(" · ");
}

const perPointTitle = (r: BoardRow): string =>
  r.narrowed == null
    ? "its interval has not narrowed from the prior's yet"
    : `spent per point its 95% interval narrowed (${num(r.narrowed, 0)} points from the prior's width)`;

/** Why a row is marked provisional, in words: by its match count, or (an adaptive
 * tournament's board) until the tournament's goal holds for its neighbours. */
export function provisionalNote(below: number, goal: Goal | null = null): string {
  if (goal) return `not placed yet: the tournament's goal (${goalText(goal)}) does not hold for its neighbours`;
  return `fewer than ${below} matches: a first estimate, pulled towards the mean by the prior; its interval is wide`;
}

/** The board's filters in words, as the snapshot line shows them. */
export function describe(b: Leaderboard): string {
  const parts = [
    b.language ?? "all languages",
    b.kind ?? "all task kinds",
    b.window === "cutoff" ? "tasks opened after each model's cutoff" : b.window ? `tasks opened ${b.window.replace(":", " ")}` : "all tasks",
  ];
  if (b.role) parts.push(`ranked as ${b.role}`);
  if (b.tournament) parts.push(`tournament #${b.tournament}`);
  return parts.join(", ");
}

const col = createColumnHelper<BoardRow>();

function columns(scale: Scale, note: string) {
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
            {r.provisional && (
              <span className="badge provisional" title={note}>
                provisional
              </span>
            )}
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
    col.accessor("submitter", { header: "As submitter", cell: (c) => num(c.getValue()) }),
    col.accessor("reviewer", { header: "As reviewer", cell: (c) => num(c.getValue()) }),
    col.accessor("patch_correct", {
      header: "Patch correct",
      cell: (c) => <span title="share of its submitter rounds whose patch was correct">{rate(c.getValue(), c.row.original.rounds_submitted)}</span>,
    }),
    col.accessor("tests_valid", {
      header: "Tests valid",
      cell: (c) => <span title="share of its reviewer rounds whose tests were valid">{rate(c.getValue(), c.row.original.rounds_reviewed)}</span>,
    }),
    col.accessor("catch", {
      header: "Catch",
      cell: (c) => <span title="share of the wrong patches it reviewed that its tests caught">{rate(c.getValue(), c.row.original.wrong_patches_reviewed)}</span>,
    }),
    col.accessor("draw", {
      header: "Draws",
      cell: (c) => <span title="share of the rounds it played (either role) that were drawn">{rate(c.getValue(), c.row.original.rounds)}</span>,
    }),
    col.accessor((r) => (r.usage ? r.usage.prompt_tokens + r.usage.completion_tokens : null), {
      id: "tokens",
      header: "Tokens",
      cell: (c) => { const v = c.getValue(); return v === null ? "–" : v.toLocaleString("en-US"); },
    }),
    col.accessor("cost", { header: "Cost", cell: (c) => usd(c.getValue()) }),
    col.accessor((r) => r.usage?.ci_seconds ?? null, {
      id: "ci_seconds",
      header: "CI time",
      cell: (c) => <span title="CI time of the matches it played (a match's runs count for both its models)">{secs(c.getValue())}</span>,
    }),
    col.accessor((r) => r.per_point?.tokens ?? null, {
      id: "per_point",
      header: "Per point",
      cell: (c) => <span title={perPointTitle(c.row.original)}>{perPointText(c.row.original)}</span>,
    }),
    col.accessor("latency", { header: "Latency", cell: (c) => secs(c.getValue()) }),
    col.accessor("organization", { header: "Organization", cell: (c) => c.getValue() ?? "–" }),
    col.accessor("license", { header: "Licence", cell: (c) => c.getValue() ?? "–" }),
    col.accessor("knowledge_cutoff", { header: "Cutoff", cell: (c) => c.getValue() ?? "–" }),
  ];
}

function Filters({ f, set }: { f: BoardFilters; set: (change: (f: BoardFilters) => BoardFilters) => void }) {
  const tournaments = useTournaments();
  const window = windowOf(f);
  return (
    <form className="filters" aria-label="Leaderboard filters" onSubmit={(e) => e.preventDefault()}>
      <label>
        Language
        <select value={f.language ?? ""} onChange={(e) => set((g) => ({ ...g, language: oneOf(LANGUAGES, e.target.value) }))}>
          <option value="">all</option>
          {LANGUAGES.map((l) => <option key={l}>{l}</option>)}
        </select>
      </label>
      <label title="Rank by the rating the model earns in this role (rounds as submitter or as reviewer)">
        Rank by role
        <select value={f.role ?? ""} onChange={(e) => set((g) => ({ ...g, role: oneOf(ROLES, e.target.value) }))}>
          <option value="">both (matches)</option>
          {ROLES.map((l) => <option key={l}>{l}</option>)}
        </select>
      </label>
      <label>
        Task kind
        <select value={f.kind ?? ""} onChange={(e) => set((g) => ({ ...g, kind: oneOf(KINDS, e.target.value) }))}>
          <option value="">all</option>
          {KINDS.map((l) => <option key={l}>{l}</option>)}
        </select>
      </label>
      <label title="Contamination view: only tasks a model cannot have seen the fix of">
        Tasks
        <select aria-label="Task-date window" value={window} onChange={(e) => set((g) => withWindow(g, e.target.value as Window))}>
          <option value="">all</option>
          <option value="cutoff">opened after each model's cutoff</option>
          <option value="date">opened after a day</option>
        </select>
      </label>
      {window === "date" && (
        <label>
          Opened after
          <input
            type="date"
            aria-label="Tasks opened after"
            value={f.created_after ?? ""}
            onChange={(e) => e.target.value && set((g) => withWindow(g, "date", e.target.value))}
          />
        </label>
      )}
      <label>
        Tournament
        <select
          value={f.tournament ?? ""}
          onChange={(e) => set((g) => ({ ...g, tournament: e.target.value ? Number(e.target.value) : undefined }))}
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
      {window === "cutoff" && (
        <p className="hint">
          A match counts when its task's issue was opened after the knowledge cutoff of both its models (baselines have
          none); models without a recorded cutoff are left out.
        </p>
      )}
    </form>
  );
}

const oneOf = <T extends string>(allowed: readonly T[], v: string): T | undefined =>
  (allowed as readonly string[]).includes(v) ? (v as T) : undefined;

export function LeaderboardPage() {
  const [params, setParams] = useSearchParams();
  const f = parseFilters(params);
  // Changes build on the latest filters, not this render's: two quick changes before the
  // URL re-renders the page would otherwise lose the first. The router applies a navigation
  // in a transition, so a render in between (a board arriving) still shows the old URL: the
  // filters are taken from the URL only when it really changed (a change landing, or the
  // browser's back button), and each change lands at once (flushSync) rather than queueing.
  const key = params.toString();
  const seen = useRef(key);
  const latest = useRef(f);
  if (seen.current !== key) {
    seen.current = key;
    latest.current = f;
  }
  const set = (change: (f: BoardFilters) => BoardFilters) => {
    latest.current = change(latest.current);
    setParams(filtersToParams(latest.current), { flushSync: true });
  };
  const board = useLeaderboard(apiQuery(f));
  const rows = useMemo(() => board.data?.rows ?? [], [board.data]);
  const scale = useMemo(() => scaleOf(rows.flatMap((r) => [r.ci_low, r.ci_high, r.rating])), [rows]);
  const note = provisionalNote(board.data?.provisional_below ?? 0, board.data?.goal ?? null);
  const cols = useMemo(() => columns(scale, note), [scale, note]);
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
      set((g) => ({ ...g, sort: first?.id ?? "rating", desc: first?.desc ?? true }));
    },
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
    sortDescFirst: true,
    autoResetPageIndex: false,
  });
  const sortedRows = table.getRowModel().rows;
  const shown = useMemo(() => sortedRows.map((r) => r.original), [sortedRows]);

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
      <Filters f={f} set={set} />
      {board.isPending ? (
        <Loading what="the leaderboard" />
      ) : board.error || !board.data ? (
        <ErrorBox error={board.error} retry={() => void board.refetch()} />
      ) : (
        <>
          <p className="snapshot">
            Snapshot <strong>{board.data.computed_at ? when(board.data.computed_at) : "not computed yet"}</strong>{" "}
            over <strong data-testid="match-count">{board.data.match_count}</strong> matches ({describe(board.data)}).{" "}
            {!board.data.current && board.data.computed_at && (
              <span className="pending">A worker is rating the current window: reload in a moment. </span>
            )}
            <span className="export">
              Export <button type="button" onClick={() => exportAs("csv")}>CSV</button>{" "}
              <button type="button" onClick={() => exportAs("json")}>JSON</button>{" "}
              <a href={`api/results.jsonl${f.tournament ? `?tournament=${f.tournament}` : ""}`}>all results (JSONL)</a>
            </span>
          </p>
          {rows.length === 0 ? (
            <Empty>
              {!board.data.current && board.data.computed_at === null
                ? "This task-date window is being rated by a worker: reload in a moment."
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
