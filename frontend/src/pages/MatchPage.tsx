// A match's whole evidence: the issue, both rounds side by side (answers as diffs, every CI run
// with steps, logs and tests, the four facts with reasons, the winner), latency, tokens and cost;
// the gold patch and tests once the match has finished. Until then the server withholds the
// answers' text and diffs, the CI logs and the gold, and the page says so.
import { useState } from "react";
import { Link, useParams } from "react-router";
import type { AnswerEvidence, MatchEvidence, RoundEvidence } from "../api/client";
import { useMatch } from "../api/queries";
import { DiffView } from "../components/DiffView";
import { LogView } from "../components/LogView";
import { Markdown } from "../components/Markdown";
import { QueryState } from "../components/Status";
import { FAULT_HELP, faultLabel } from "../lib/faults";
import { secs, usd, when } from "../lib/format";
import { stripAnsi } from "../lib/text";

/** A CI run as the evidence stores it (ci_runner's CIResult); read defensively: it is untyped JSON. */
type Step = { name: string; exit_code: number | null; duration_s: number; log: string; truncated?: boolean; timed_out?: boolean; oom_killed?: boolean; skipped?: boolean };
type CIRun = { status: string; steps?: Step[]; tests?: Record<string, string>; error?: string | null; patch_error?: string | null; duration_s?: number; image?: string | null };

const FACTS = ["patch_applies", "patch_correct", "tests_valid", "tests_catch"] as const;
const FACT_LABEL: Record<string, string> = {
  patch_applies: "Patch applies",
  patch_correct: "Patch is correct",
  tests_valid: "Tests are valid",
  tests_catch: "Tests catch the patch",
};
const RUN_LABEL: Record<string, string> = {
  tests_on_base: "reviewer's tests on the base (should fail)",
  tests_on_gold: "reviewer's tests on the gold fix (should pass)",
  patch_with_gold_tests: "submitter's patch with the gold tests",
  patch_with_gold_tests_again: "submitter's patch with the gold tests, second independent run",
  tests_on_patch: "reviewer's tests on the submitter's patch",
  tests_on_patch_again: "reviewer's tests on the submitter's patch, again",
  tests_on_gold_again: "reviewer's tests on the gold fix, again",
  tests_on_neutral_patch: "reviewer's tests on the patch after a neutral change",
};

function stepState(s: Step): string {
  if (s.skipped) return "skipped";
  if (s.timed_out) return "timed out";
  if (s.oom_killed) return "out of memory";
  return s.exit_code === 0 ? "ok" : `exit ${s.exit_code ?? "?"}`;
}

function TestTable({ tests }: { tests: Record<string, string> }) {
  const [open, setOpen] = useState(false);
  const entries = Object.entries(tests).sort(([, a], [, b]) => Number(a === "passed") - Number(b === "passed"));
  const failing = entries.filter(([, o]) => o === "failed" || o === "error").length;
  if (entries.length === 0) return <p className="hint">No tests reported.</p>;
  return (
    <div>
      <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? "Hide" : "Show"} {entries.length} tests ({failing} failing)
      </button>
      {open && (
        <table className="tests" aria-label="Tests">
          <thead><tr><th>Test</th><th>Outcome</th></tr></thead>
          <tbody>
            {entries.slice(0, 2000).map(([name, outcome]) => (
              <tr key={name} className={`outcome-${outcome}`}><td className="mono">{stripAnsi(name)}</td><td>{outcome}</td></tr>
            ))}
          </tbody>
        </table>
      )}
      {open && entries.length > 2000 && <p className="hint">First 2,000 of {entries.length} shown (failing first).</p>}
    </div>
  );
}

function RunView({ label, run }: { label: string; run: CIRun }) {
  return (
    <details className={`run status-${run.status}`}>
      <summary>
        <strong>{RUN_LABEL[label] ?? label}</strong>: <span className="badge">{run.status}</span> {run.duration_s !== undefined && secs(run.duration_s)}
      </summary>
      {run.patch_error && <p className="error-text">Diff refused: {stripAnsi(run.patch_error)}</p>}
      {run.error && <p className="error-text">{stripAnsi(run.error)}</p>}
      {run.image && <p className="hint">image {run.image}</p>}
      <table className="steps" aria-label="Steps">
        <thead><tr><th>Step</th><th>Result</th><th>Time</th></tr></thead>
        <tbody>
          {(run.steps ?? []).map((s, i) => (
            <tr key={i}>
              <td>
                {stripAnsi(s.name)}
                {s.log && <LogView log={s.log} title={stripAnsi(s.name)} />}
                {s.truncated && <span className="hint"> (log truncated)</span>}
              </td>
              <td className={s.exit_code === 0 && !s.timed_out ? "ok" : "bad"}>{stepState(s)}</td>
              <td>{secs(s.duration_s)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <TestTable tests={run.tests ?? {}} />
    </details>
  );
}

function AnswerView({ answer, label }: { answer: AnswerEvidence | undefined; label: string }) {
  const [raw, setRaw] = useState(false);
  if (!answer) return <p className="state empty">No {label} yet.</p>;
  const text = answer.raw_text;
  return (
    <div className="answer">
      <h4>
        {label} by {answer.model}
        <span className="meta"> · {secs(answer.latency_s)} · {answer.prompt_tokens + answer.completion_tokens} tokens ({answer.prompt_tokens} in, {answer.completion_tokens} out) · {usd(answer.cost)}</span>
      </h4>
      {(answer.error || answer.parse_error) && <p className="error-text">{stripAnsi(answer.error ?? answer.parse_error ?? "")}</p>}
      {text === null ? (
        <p className="state withheld">The {label} is shown once the match has finished.</p>
      ) : (
        <>
          <DiffView diff={answer.diff} label={label} />
          <button type="button" aria-expanded={raw} onClick={() => setRaw(!raw)}>{raw ? "Hide" : "Show"} the raw answer</button>
          {raw && <pre className="raw">{stripAnsi(text)}</pre>}
        </>
      )}
    </div>
  );
}

/** The task's reference answer: shown once the match has finished, never while it plays. */
function GoldView({ task }: { task: MatchEvidence["task_detail"] }) {
  if (task.gold_access !== "shown") {
    return (
      <section className="card gold" aria-label="Gold fix">
        <h2>Gold fix</h2>
        <p className="state withheld" data-testid="gold-withheld">
          {task.gold_access === "after_match"
            ? "The gold patch and tests are shown once the match has finished."
            : "The gold patch and tests are available to the admin (on the task, with the admin token)."}
        </p>
      </section>
    );
  }
  return (
    <section className="card gold" aria-label="Gold fix">
      <details>
        <summary><h2>Gold fix</h2> the reference patch and tests the rounds were judged against</summary>
        <h4>Gold patch</h4>
        <DiffView diff={task.patch} label="gold patch" />
        <h4>Gold tests</h4>
        <DiffView diff={task.test_patch} label="gold tests" />
      </details>
    </section>
  );
}

function RoundView({ round }: { round: RoundEvidence }) {
  const patch = round.answers.find((a) => a.role === "submitter");
  const tests = round.answers.find((a) => a.role === "reviewer");
  return (
    <section className="round card" aria-label={`Round ${round.idx + 1}`}>
      <h3>Round {round.idx + 1}: {round.submitter} submits, {round.reviewer} reviews</h3>
      <p className="winner" data-testid="round-winner">
        {round.judged ? <>Winner: <strong>{round.winner === "draw" ? "draw" : round.winner}</strong>{round.winner_role && round.winner_role !== "draw" ? ` (${round.winner_role})` : ""}</> : "Not judged yet"}
      </p>
      <table className="facts" aria-label="Facts">
        <tbody>
          {FACTS.map((f) => (
            <tr key={f}>
              <th scope="row">{FACT_LABEL[f]}</th>
              <td className={round.facts[f] === undefined ? "" : round.facts[f] ? "ok" : "bad"}>{round.facts[f] === undefined ? "–" : round.facts[f] ? "yes" : "no"}</td>
              <td className="reason">{stripAnsi(round.reasons[f] ?? "")}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <AnswerView answer={patch} label="patch" />
      <AnswerView answer={tests} label="tests" />
      <h4>CI runs</h4>
      {Object.keys(round.runs).length === 0 ? <p className="hint">No CI runs yet.</p> : Object.entries(round.runs).map(([label, run]) => <RunView key={label} label={label} run={run as CIRun} />)}
    </section>
  );
}

/** Who kept a failed match from finishing: a model's endpoint (named, loudly) or a component. */
function FaultLine({ m }: { m: MatchEvidence }) {
  const label = faultLabel(m.fault, m.at_fault);
  return (
    <p className="fault" data-testid="match-fault" role={m.at_fault ? "alert" : undefined}>
      At fault:{" "}
      {m.fault === null ? (
        "not recorded"
      ) : m.fault === "model_endpoint" && m.at_fault ? (
        <strong>
          model <Link to={`/models/${encodeURIComponent(m.at_fault)}`}>{m.at_fault}</Link>'s endpoint
        </strong>
      ) : (
        <strong>{label}</strong>
      )}
      {m.fault !== null && <span className="hint"> ({FAULT_HELP[m.fault]})</span>}. Not scored: the match is left out of the ratings.
    </p>
  );
}

function Header({ m }: { m: MatchEvidence }) {
  return (
    <section className="card">
      <p>
        <Link to={`/models/${encodeURIComponent(m.a)}`}>{m.a}</Link> vs <Link to={`/models/${encodeURIComponent(m.b)}`}>{m.b}</Link> on{" "}
        <strong>{m.task}</strong> ({m.language}, {m.kind}) · tournament <Link to={`/tournaments/${m.tournament_id}`}>#{m.tournament_id}</Link>
      </p>
      <p className="verdict" data-testid="match-result">
        <span className={`badge status-${m.status}`}>{m.status}</span>{" "}
        {m.result ? <>Result: <strong>{m.result}</strong></> : null}
        {m.score ? ` · rounds won: ${Object.entries(m.score).map(([k, v]) => `${k} ${v}`).join(", ")}` : ""}
        {m.reason ? <span className="error-text"> · {stripAnsi(m.reason)}</span> : null}
      </p>
      {m.status === "failed" && <FaultLine m={m} />}
      {m.withheld && <p className="withheld" data-testid="match-withheld">{m.withheld}</p>}
      <p className="meta">
        {secs(m.latency_s)} of model time · {m.prompt_tokens + m.completion_tokens} tokens ({m.prompt_tokens} in, {m.completion_tokens} out) · cost {usd(m.cost)} · finished {when(m.finished_at)}
      </p>
      <p className="meta">repo {m.task_detail.repo} at {m.task_detail.base_commit.slice(0, 12)}</p>
    </section>
  );
}

export function MatchPage() {
  const id = Number(useParams().id);
  const match = useMatch(id);
  return (
    <>
      <h1>Match #{id}</h1>
      <QueryState query={match} what="the match">
        {(m) => (
          <>
            <Header m={m} />
            <section className="card issue" aria-label="Issue">
              <h2>Issue</h2>
              <Markdown text={m.task_detail.problem_statement || "(no issue text)"} />
              {m.task_detail.hints_text && (
                <details><summary>Hints</summary><Markdown text={m.task_detail.hints_text} /></details>
              )}
            </section>
            <GoldView task={m.task_detail} />
            <div className="rounds">
              {m.rounds.length === 0 ? <p className="state empty">No rounds played yet.</p> : m.rounds.map((r) => <RoundView key={r.idx} round={r} />)}
            </div>
          </>
        )}
      </QueryState>
    </>
  );
}
