// One tournament: settings, live progress from its events, its matches, and its leaderboard once over.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Link, useParams } from "react-router";
import { adminToken, api, unwrap, type TournamentOut } from "../api/client";
import { useMatches, useTournament } from "../api/queries";
import { MatchTable } from "../components/MatchTable";
import { ProgressBar } from "../components/Progress";
import { ErrorBox, QueryState } from "../components/Status";
import { criterionText, goalText, spendingLines, stopText } from "../lib/adaptive";
import { modelAtFaultLine } from "../lib/faults";
import { secs, usd, when } from "../lib/format";
import { stripAnsi } from "../lib/text";
import { liveLabel, useTournamentEvents } from "../lib/sse";

/** Loud, as `arena tournament` is: a dead endpoint is never mistaken for a model that answered nothing. */
function ModelsAtFault({ t }: { t: TournamentOut }) {
  if (t.models_at_fault.length === 0) return null;
  return (
    <div className="state error" role="alert" data-testid="models-at-fault">
      <strong>{t.progress.failed} match(es) failed and are left out of the standings.</strong>
      <ul>
        {t.models_at_fault.map((m) => (
          <li key={m.model}>
            <strong>{modelAtFaultLine(m)};</strong> last: <span className="error-text">{stripAnsi(m.last_reason)}</span>{" "}
            (<Link to={`/matches?tournament=${t.id}&model=${encodeURIComponent(m.model)}`}>its matches</Link>)
          </li>
        ))}
      </ul>
    </div>
  );
}

/** An adaptive tournament's goal, criterion, estimate, spending and stop reason: live, as the
 * events stream refreshes the tournament. */
function Adaptive({ t }: { t: TournamentOut }) {
  const a = t.adaptive;
  if (!a) return null;
  const stopped = stopText(a.stop_reason);
  return (
    <dl className="facts-list" data-testid="adaptive">
      <dt>Mode</dt><dd>adaptive (the pairing engine chooses each next match, {a.in_flight} at a time)</dd>
      <dt>Goal</dt><dd>{goalText(a.goal)}</dd>
      <dt>Criterion</dt><dd data-testid="adaptive-criterion">{criterionText(a)}</dd>
      {a.stop_reason === null && <><dt>Estimate</dt><dd>about {a.matches_to_finish} more match(es)</dd></>}
      <dt>Spent</dt><dd data-testid="adaptive-spent">{spendingLines(a).join(" · ")}</dd>
      {a.budget.per_model_matches != null && <><dt>Per model</dt><dd>at most {a.budget.per_model_matches} matches</dd></>}
      {a.placing.length > 0 && <><dt>Placing</dt><dd>{a.placing.join(", ")} (only their matches are played)</dd></>}
      {stopped && <><dt>Stopped</dt><dd data-testid="adaptive-stop">{stopped}</dd></>}
    </dl>
  );
}

/** What each model's part cost: matches, the CI time of its matches, its own tokens and
 * their price (– where the model has no registered price). */
function SpendingTable({ t }: { t: TournamentOut }) {
  if (t.spending.length === 0) return null;
  return (
    <div className="table-wrap">
      <table aria-label="Spending per model">
        <thead><tr><th>Model</th><th>Matches</th><th title="CI time of the matches it played (a match's runs count for both its models)">CI time</th><th>Tokens</th><th>Cost</th></tr></thead>
        <tbody>
          {t.spending.map((m) => (
            <tr key={m.model}>
              <td>{m.model}</td><td>{m.matches}</td><td>{secs(m.ci_seconds)}</td><td>{m.tokens.toLocaleString("en-US")}</td><td>{usd(m.money_usd)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function TournamentPage() {
  const id = Number(useParams().id);
  const client = useQueryClient();
  const tournament = useTournament(id);
  const running = tournament.data?.status === "running" || !!tournament.data?.progress.running;
  const live = useTournamentEvents(id, running, () => {
    void client.invalidateQueries({ queryKey: ["tournament", id] });
    void client.invalidateQueries({ queryKey: ["leaderboard"] });
    void client.invalidateQueries({ queryKey: ["matches"] });
  });
  const matches = useMatches({ tournament: id, limit: 100 }, running ? 3000 : false);
  const cancel = useMutation({
    mutationFn: () => unwrap(api.POST("/api/tournaments/{tournament_id}/cancel", { params: { path: { tournament_id: id } } })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ["tournament", id] }),
  });
  return (
    <>
      <h1>Tournament #{id}</h1>
      <QueryState query={tournament} what="the tournament">
        {(stored) => {
          const t = live.tournament ?? stored;
          return (
            <section className="card" aria-live="polite">
              <p>
                <strong className={`status-${t.status}`} data-testid="tournament-status">{t.status}</strong>
                {running && <span className="live"> · {liveLabel[live.state]}</span>}
                {" · "}started {when(t.created_at)}{t.finished_at ? `, finished ${when(t.finished_at)}` : ""}
              </p>
              <ProgressBar p={t.progress} />
              <ModelsAtFault t={t} />
              <Adaptive t={t} />
              <SpendingTable t={t} />
              <dl className="facts-list">
                <dt>Models</dt><dd>{t.models.map((m) => <Link key={m} to={`/models/${encodeURIComponent(m)}`} className="chip">{m}</Link>)}</dd>
                <dt>Tasks</dt><dd>{t.tasks}</dd>
                <dt>Context budget</dt><dd>{t.settings.context_budget_tokens} tokens</dd>
              </dl>
              <p>
                <Link to={`/?tournament=${id}`}>Leaderboard of this tournament</Link> ·{" "}
                <Link to={`/head-to-head?tournament=${id}`}>head-to-head</Link>
              </p>
              {t.status === "running" && adminToken.get() && (
                <button type="button" onClick={() => cancel.mutate()} disabled={cancel.isPending}>Cancel tournament</button>
              )}
              {cancel.error && <ErrorBox error={cancel.error} />}
            </section>
          );
        }}
      </QueryState>
      <h2>Matches</h2>
      <QueryState query={matches} what="matches" empty={(d) => (d.matches.length === 0 ? "No matches yet." : null)}>
        {(d) => <MatchTable matches={d.matches} />}
      </QueryState>
    </>
  );
}
