// Matches filtered by the URL: where a heatmap cell or a model page sends you.
import { useSearchParams } from "react-router";
import { useMatches } from "../api/queries";
import { MatchTable } from "../components/MatchTable";
import { QueryState } from "../components/Status";
import { LANGUAGES } from "../lib/filters";

const PAGE = 100;

export function MatchesPage() {
  const [params, setParams] = useSearchParams();
  const model = params.get("model") ?? undefined;
  const opponent = params.get("opponent") ?? undefined;
  const t = Number(params.get("tournament"));
  const offset = Math.max(0, Number(params.get("offset")) || 0);
  const query = {
    model,
    opponent: model ? opponent : undefined,
    task: params.get("task") ?? undefined,
    tournament: Number.isInteger(t) && t > 0 ? t : undefined,
    language: LANGUAGES.find((l) => l === params.get("language")),
    result: params.get("result") ?? undefined,
    limit: PAGE,
    offset,
  };
  const matches = useMatches(query);
  const page = (delta: number) => {
    const next = new URLSearchParams(params);
    next.set("offset", String(Math.max(0, offset + delta)));
    setParams(next);
  };
  return (
    <>
      <h1>
        Matches{model ? ` of ${model}` : ""}{opponent ? ` against ${opponent}` : ""}
        {query.task ? ` on ${query.task}` : ""}
      </h1>
      <QueryState query={matches} what="matches" empty={(d) => (d.matches.length === 0 ? "No matches here." : null)}>
        {(d) => (
          <>
            <p>{d.total} matches{opponent ? " between them" : ""}</p>
            <MatchTable matches={d.matches} />
            <nav className="pager">
              <button type="button" disabled={offset === 0} onClick={() => page(-PAGE)}>Newer</button>
              <span>{offset + 1}–{Math.min(offset + PAGE, d.total)} of {d.total}</span>
              <button type="button" disabled={offset + PAGE >= d.total} onClick={() => page(PAGE)}>Older</button>
            </nav>
          </>
        )}
      </QueryState>
    </>
  );
}
