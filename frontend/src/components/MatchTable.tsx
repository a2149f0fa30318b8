// A list of matches, each a link to its evidence.
import { Link } from "react-router";
import type { MatchSummary } from "../api/client";
import { faultLabel } from "../lib/faults";
import { when } from "../lib/format";

export function MatchTable({ matches }: { matches: MatchSummary[] }) {
  return (
    <div className="table-wrap">
      <table className="matches" aria-label="Matches">
        <thead>
          <tr>
            <th>#</th><th>Task</th><th>Language</th><th>A</th><th>B</th><th>Status</th><th>Result</th><th>Score</th><th>Finished</th>
          </tr>
        </thead>
        <tbody>
          {matches.map((m) => (
            <tr key={m.id}>
              <td><Link to={`/matches/${m.id}`}>{m.id}</Link></td>
              <td><Link to={`/matches/${m.id}`}>{m.task}</Link></td>
              <td>{m.language}</td>
              <td>{m.a}</td>
              <td>{m.b}</td>
              <td className={`status-${m.status}`} title={m.reason ?? undefined}>
                {m.status}
                {m.status === "failed" && m.fault && <span className="fault"> · {faultLabel(m.fault, m.at_fault)} at fault</span>}
              </td>
              <td>{m.result ?? "–"}</td>
              <td>{m.score ? Object.entries(m.score).map(([k, v]) => `${k} ${v}`).join(" · ") : "–"}</td>
              <td>{when(m.finished_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
