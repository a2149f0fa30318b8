// Head-to-head: who beats whom (win fraction) and how often they met (match count); a cell opens those matches.
import { Link, useSearchParams } from "react-router";
import type { Matrix } from "../api/client";
import { useMatrix } from "../api/queries";
import { QueryState } from "../components/Status";
import { KINDS, LANGUAGES } from "../lib/filters";

function shade(v: number | null | undefined, max: number, hue: "diverging" | "count"): string {
  if (v === null || v === undefined) return "transparent";
  if (hue === "count") return `hsl(215 60% ${95 - (max ? (v / max) * 55 : 0)}%)`;
  return v >= 0.5 ? `hsl(145 55% ${95 - (v - 0.5) * 2 * 50}%)` : `hsl(0 65% ${95 - (0.5 - v) * 2 * 45}%)`;
}

function Heatmap({ m, kind, title }: { m: Matrix; kind: "win" | "count"; title: string }) {
  const max = Math.max(0, ...m.matches.flat());
  return (
    <figure className="heatmap">
      <figcaption>{title}</figcaption>
      <div className="table-wrap">
        <table aria-label={title}>
          <thead>
            <tr>
              <th scope="col">row vs column</th>
              {m.models.map((b) => <th key={b} scope="col" className="rot"><span>{b}</span></th>)}
            </tr>
          </thead>
          <tbody>
            {m.models.map((a, i) => (
              <tr key={a}>
                <th scope="row">{a}</th>
                {m.models.map((b, j) => {
                  const n = m.matches[i]?.[j] ?? 0;
                  const v = kind === "win" ? m.win_fraction[i]?.[j] : n;
                  const text = i === j || n === 0 ? "" : v === null || v === undefined ? "–" : kind === "win" ? v.toFixed(2) : String(v);
                  return (
                    <td key={b} style={{ background: i === j ? "#eee" : shade(v, max, kind === "win" ? "diverging" : "count") }}>
                      {i !== j && n > 0 ? (
                        <Link to={`/matches?model=${encodeURIComponent(a)}&opponent=${encodeURIComponent(b)}`} title={`${a} vs ${b}: ${n} matches`}>
                          {text}
                        </Link>
                      ) : (
                        text
                      )}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}

export function HeadToHeadPage() {
  const [params, setParams] = useSearchParams();
  const language = LANGUAGES.find((l) => l === params.get("language"));
  const kind = KINDS.find((k) => k === params.get("kind"));
  const t = Number(params.get("tournament"));
  const tournament = Number.isInteger(t) && t > 0 ? t : undefined;
  const matrix = useMatrix({ language, kind, tournament });
  const setParam = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    setParams(next);
  };
  return (
    <>
      <h1>Head-to-head</h1>
      <form className="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Language
          <select value={language ?? ""} onChange={(e) => setParam("language", e.target.value)}>
            <option value="">all</option>
            {LANGUAGES.map((l) => <option key={l}>{l}</option>)}
          </select>
        </label>
        <label>
          Task kind
          <select value={kind ?? ""} onChange={(e) => setParam("kind", e.target.value)}>
            <option value="">all</option>
            {KINDS.map((l) => <option key={l}>{l}</option>)}
          </select>
        </label>
        {tournament && <span>Tournament #{tournament} <button type="button" onClick={() => setParam("tournament", "")}>all tournaments</button></span>}
      </form>
      <QueryState query={matrix} what="the matrices" empty={(m) => (m.models.length === 0 ? "No finished matches yet." : null)}>
        {(m) => (
          <div className="heatmaps">
            <Heatmap m={m} kind="win" title="Win fraction of the row model (decisive matches)" />
            <Heatmap m={m} kind="count" title="Matches played" />
          </div>
        )}
      </QueryState>
    </>
  );
}
