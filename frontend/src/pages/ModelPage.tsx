// One model: its configuration and metadata, its ratings per scope, cost, latency and recent matches.
import { Link, useParams } from "react-router";
import { useLeaderboard, useMatches, useModel } from "../api/queries";
import { MatchTable } from "../components/MatchTable";
import { QueryState } from "../components/Status";
import { KINDS, LANGUAGES } from "../lib/filters";
import { num, rate, secs, usd } from "../lib/format";

function ScopeRow({ label, query, model }: { label: string; query: Parameters<typeof useLeaderboard>[0]; model: string }) {
  const board = useLeaderboard(query);
  const row = board.data?.rows.find((r) => r.model === model);
  const params = new URLSearchParams(
    Object.entries(query).filter(([, v]) => v !== undefined).map(([k, v]) => [k, v === true ? "1" : String(v)]),
  );
  return (
    <tr>
      <th scope="row"><Link to={`/?${params}`}>{label}</Link></th>
      <td>{board.isPending ? "…" : board.error ? "error" : num(row?.rating)}</td>
      <td>{row?.ci_low !== null && row?.ci_low !== undefined ? `${num(row.ci_low)}–${num(row.ci_high)}` : "–"}</td>
      <td>{row?.rank_ub ?? "–"}</td>
      <td>
        {row?.matches ?? "–"}
        {row?.provisional && (
          <>
            {" "}
            <span className="badge provisional" title="few matches: a first estimate">provisional</span>
          </>
        )}
      </td>
      <td>{row?.wins !== null && row?.wins !== undefined ? `${row.wins} / ${row.losses} / ${row.ties}` : "–"}</td>
      <td>{num(row?.submitter)}</td>
      <td>{num(row?.reviewer)}</td>
      <td>{row ? rate(row.patch_correct, row.rounds_submitted) : "–"}</td>
      <td>{row ? rate(row.tests_valid, row.rounds_reviewed) : "–"}</td>
      <td>{row ? rate(row.catch, row.wrong_patches_reviewed) : "–"}</td>
      <td>{usd(row?.cost)}</td>
      <td>{secs(row?.latency)}</td>
    </tr>
  );
}

export function ModelPage() {
  const name = useParams().name ?? "";
  const model = useModel(name);
  const recent = useMatches({ model: name, limit: 20 });
  return (
    <>
      <h1>{name}</h1>
      <QueryState query={model} what="the model">
        {(m) => (
          <dl className="facts-list">
            <dt>Kind</dt><dd>{m.kind}{m.retired ? " (retired)" : ""}</dd>
            {m.model && (<><dt>Endpoint model</dt><dd>{m.model}</dd></>)}
            <dt>Organization</dt><dd>{m.organization ?? "–"}</dd>
            <dt>Licence</dt><dd>{m.license ?? "–"}{m.open_weights ? " (open weights)" : ""}</dd>
            <dt>Released</dt><dd>{m.release_date ?? "–"}</dd>
            <dt>Knowledge cutoff</dt>
            <dd>{m.knowledge_cutoff ? <Link to="/?after_cutoff=1">{m.knowledge_cutoff} (rated on later tasks)</Link> : "–"}</dd>
            <dt>Price per M tokens</dt><dd>{m.price_input_per_mtok === null ? "–" : `${usd(m.price_input_per_mtok)} in / ${usd(m.price_output_per_mtok)} out`}</dd>
          </dl>
        )}
      </QueryState>
      <h2>Ratings</h2>
      <div className="table-wrap">
        <table aria-label="Ratings per scope">
          <thead>
            <tr><th>Scope</th><th>Rating</th><th>95% CI</th><th>Rank (UB)</th><th>Matches</th><th>W / L / T</th><th>As submitter</th><th>As reviewer</th><th>Patch correct</th><th>Tests valid</th><th>Catch</th><th>Cost</th><th>Latency</th></tr>
          </thead>
          <tbody>
            <ScopeRow label="overall" query={{}} model={name} />
            {LANGUAGES.map((l) => <ScopeRow key={l} label={l} query={{ language: l }} model={name} />)}
            {KINDS.map((k) => <ScopeRow key={k} label={k} query={{ kind: k }} model={name} />)}
            <ScopeRow label="tasks after the cutoffs" query={{ after_cutoff: true }} model={name} />
          </tbody>
        </table>
      </div>
      <h2>Recent matches</h2>
      <QueryState query={recent} what="matches" empty={(d) => (d.matches.length === 0 ? "No matches yet." : null)}>
        {(d) => (
          <>
            <MatchTable matches={d.matches} />
            <p><Link to={`/matches?model=${encodeURIComponent(name)}`}>All {d.total} matches</Link></p>
          </>
        )}
      </QueryState>
    </>
  );
}
