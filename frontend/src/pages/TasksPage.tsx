// Tasks: validity and kind, language, repo, gold test counts and the environment's deviation from
// what the job asks; a row opens to the legs considered for its pipeline and, with the admin
// token, the gold patch and tests (to anyone else: "available to the admin"); an import form; the
// corpus report (each instance's stage, refused import lines included).
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Link, useSearchParams } from "react-router";
import { adminToken, api, unwrap, type ImportReport, type TaskDetail, type TaskSummary } from "../api/client";
import { useTask, useTasks } from "../api/queries";
import { DiffView } from "../components/DiffView";
import { ErrorBox, QueryState } from "../components/Status";
import { KINDS, LANGUAGES } from "../lib/filters";
import { CorpusReport } from "./CorpusReport";
import { when } from "../lib/format";
import { legCounts, legOutcome, type Leg } from "../lib/legs";

const VALIDITY = ["valid", "invalid", "unvalidated"] as const;

type Validation = { valid?: boolean; reason?: string | null; fail_to_pass?: string[]; pass_to_pass?: string[]; flaky?: string[]; broken?: string[]; guarded?: boolean | null };

/** How the environment differs from what the job asks: shown wherever the task is, never silent. */
function Deviation({ notes }: { notes: readonly string[] }) {
  if (notes.length === 0) return null;
  return (
    <ul className="deviation" aria-label="Environment deviation">
      {notes.map((n) => (
        <li key={n}><span className="badge deviation-badge">deviation</span> {n}</li>
      ))}
    </ul>
  );
}

function LegsConsidered({ legs }: { legs: readonly Leg[] }) {
  if (legs.length === 0) return <p className="hint">No job legs considered: the task brings its own pipeline steps, or it was not derived yet.</p>;
  return (
    <details className="legs">
      <summary>Legs considered ({legs.length}: {legCounts(legs)})</summary>
      <ol aria-label="Legs considered">
        {legs.map((l) => (
          <li key={`${l.workflow}|${l.leg}`} data-status={l.status}>
            <span className={`badge leg-${l.status}`}>{l.status}</span>{" "}
            <span className="mono">{l.leg}</span> <span className="meta">@ {l.workflow}{l.rank !== null ? ` · rank ${l.rank}` : ""}</span>
            <div className="why">{legOutcome(l)}</div>
          </li>
        ))}
      </ol>
    </details>
  );
}

/** The gold patch and tests: the answers models are judged against, so for the admin only. */
function Gold({ t, tokenRefused }: { t: TaskDetail; tokenRefused: boolean }) {
  if (t.gold_access !== "shown") {
    return (
      <p className="state withheld" data-testid="gold-withheld">
        Gold patch and tests: available to the admin.{" "}
        {tokenRefused ? "The admin token of this tab was refused: " : "A model must not read the answer here; "}
        <Link to="/admin">enter the admin token</Link> to see them.
      </p>
    );
  }
  return (
    <details className="gold">
      <summary>Gold patch and tests (shown to the admin)</summary>
      <h4>Gold patch</h4>
      <DiffView diff={t.patch} label="gold patch" />
      <h4>Gold tests</h4>
      <DiffView diff={t.test_patch} label="gold tests" />
    </details>
  );
}

function TaskDetails({ id }: { id: string }) {
  const task = useTask(id, true);
  return (
    <QueryState query={task} what="the task">
      {({ task: t, tokenRefused }) => {
        const v = (t.validation ?? {}) as Validation;
        const pipeline = (t.pipeline ?? {}) as { steps?: { name: string }[] };
        return (
          <div className="task-detail">
            <p>{t.validated_at ? `Validated ${when(t.validated_at)}` : "Not validated yet: no test counts."}</p>
            {v.reason && <p className={v.valid ? undefined : "validity-invalid"}>{v.valid ? "Note" : "Invalid"}: {v.reason}</p>}
            {v.guarded === false && (
              <p className="unguarded">
                Unguarded: no tripwire test that must fail can be planted in its runs, so a patch
                rewriting every test result is caught only by the tripwires that must pass.
              </p>
            )}
            <dl className="facts-list">
              {t.filed_language ? <><dt>Language</dt><dd>filed as {t.filed_language}, runs as {t.language} (the language of its gold tests and patch)</dd></> : null}
              <dt>Chosen leg</dt><dd className="mono">{t.ci_job ?? "– (its own pipeline steps)"}</dd>
              <dt>Toolchain asked</dt><dd>{t.toolchain_request ?? "– (none named by the job)"}</dd>
              <dt>Environment</dt>
              <dd>{t.environment_notes.length ? <Deviation notes={t.environment_notes} /> : "as the job asks (no deviation recorded)"}</dd>
              <dt>Skipped actions</dt><dd className="mono">{t.skipped_actions.length ? t.skipped_actions.join(", ") : "none"}</dd>
            </dl>
            {pipeline.steps && <p>Pipeline: {pipeline.steps.map((s) => s.name).join(" → ")}</p>}
            <LegsConsidered legs={t.ci_legs} />
            {t.workflow_notes.length ? (
              <details><summary>Workflow notes ({t.workflow_notes.length})</summary><ul className="why">{t.workflow_notes.map((n, i) => <li key={i}>{n}</li>)}</ul></details>
            ) : null}
            {v.fail_to_pass?.length ? (
              <details><summary>FAIL_TO_PASS tests</summary><ul className="mono">{v.fail_to_pass.map((n) => <li key={n}>{n}</li>)}</ul></details>
            ) : null}
            <Gold t={t} tokenRefused={tokenRefused} />
            <p><Link to={`/matches?task=${encodeURIComponent(id)}`}>Matches on this task</Link></p>
          </div>
        );
      }}
    </QueryState>
  );
}

function TaskRow({ t }: { t: TaskSummary }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <tr>
        <td>
          <button type="button" className="link" aria-expanded={open} onClick={() => setOpen(!open)}>{open ? "▾" : "▸"} {t.instance_id}</button>
          <Deviation notes={t.environment_notes} />
        </td>
        <td className={`validity-${t.validity}`} title={t.validation_reason ?? undefined}>{t.validity}{t.validation_reason ? ` (${t.validation_reason})` : ""}</td>
        <td>{t.kind}</td>
        <td>{t.language}</td>
        <td className="mono">{t.repo}</td>
        <td>{t.issue_created_at?.slice(0, 10) ?? "–"}</td>
        <td data-col="fail_to_pass">{t.fail_to_pass ?? "–"}</td>
        <td data-col="pass_to_pass">{t.pass_to_pass ?? "–"}</td>
        <td title="left out: flaky between two runs / failing with and without the fix here">
          {t.flaky === null ? "–" : `${t.flaky} / ${t.broken}`}
        </td>
      </tr>
      {open && (
        <tr className="expanded"><td colSpan={9}><TaskDetails id={t.instance_id} /></td></tr>
      )}
    </>
  );
}

function ImportForm() {
  const client = useQueryClient();
  const [file, setFile] = useState<File | null>(null);
  const [language, setLanguage] = useState("");
  const [report, setReport] = useState<ImportReport | null>(null);
  const upload = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST("/api/tasks/import", {
          params: { query: { language: (language || undefined) as (typeof LANGUAGES)[number] | undefined } },
          body: { file: file as unknown as string },
          bodySerializer: (body) => {
            const form = new FormData();
            form.append("file", body.file as unknown as Blob);
            return form;
          },
        }),
      ),
    onSuccess: (r) => {
      setReport(r);
      void client.invalidateQueries({ queryKey: ["tasks"] });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (file) upload.mutate();
  };
  return (
    <form className="card" onSubmit={submit} aria-label="Import tasks">
      <h2>Import tasks</h2>
      <label>JSONL or SwingArena file <input type="file" accept=".jsonl,.json,.txt" onChange={(e) => setFile(e.target.files?.[0] ?? null)} /></label>
      <label>Language (when the file lacks it)
        <select value={language} onChange={(e) => setLanguage(e.target.value)}>
          <option value="">from the file</option>{LANGUAGES.map((l) => <option key={l}>{l}</option>)}
        </select>
      </label>
      <button type="submit" disabled={!file || upload.isPending}>{upload.isPending ? "Importing…" : "Import"}</button>
      {upload.error && <ErrorBox error={upload.error} />}
      {report && (
        <div role="status">
          <p>{report.imported.length} imported ({report.imported.filter((t) => t.new).length} new), {report.errors.length} bad lines.</p>
          {report.errors.length > 0 && (
            <ul className="error-text">{report.errors.map((e, i) => <li key={i}>line {e.line}, {e.field}: {e.problem}</li>)}</ul>
          )}
        </div>
      )}
    </form>
  );
}

export function TasksPage() {
  const [params, setParams] = useSearchParams();
  const query = {
    language: LANGUAGES.find((l) => l === params.get("language")),
    kind: KINDS.find((l) => l === params.get("kind")),
    validity: VALIDITY.find((l) => l === params.get("validity")),
    repo: params.get("repo") ?? undefined,
  };
  const tasks = useTasks(query);
  const set = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    setParams(next);
  };
  return (
    <>
      <h1>Tasks</h1>
      <form className="filters" onSubmit={(e) => e.preventDefault()}>
        <label>Language<select value={query.language ?? ""} onChange={(e) => set("language", e.target.value)}><option value="">all</option>{LANGUAGES.map((l) => <option key={l}>{l}</option>)}</select></label>
        <label>Kind<select value={query.kind ?? ""} onChange={(e) => set("kind", e.target.value)}><option value="">all</option>{KINDS.map((l) => <option key={l}>{l}</option>)}</select></label>
        <label>Validity<select value={query.validity ?? ""} onChange={(e) => set("validity", e.target.value)}><option value="">all</option>{VALIDITY.map((l) => <option key={l}>{l}</option>)}</select></label>
        <label>Repo contains<input defaultValue={query.repo ?? ""} onBlur={(e) => set("repo", e.target.value)} onKeyDown={(e) => e.key === "Enter" && set("repo", e.currentTarget.value)} /></label>
      </form>
      <QueryState query={tasks} what="tasks" empty={(d) => (d.tasks.length === 0 ? "No tasks match: import some below." : null)}>
        {(d) => (
          <>
            <p>{d.total} tasks{d.total > d.tasks.length ? ` (first ${d.tasks.length} shown)` : ""}</p>
            <div className="table-wrap">
              <table aria-label="Tasks">
                <thead><tr><th>Instance</th><th>Validity</th><th>Kind</th><th>Language</th><th>Repo</th><th>Issue opened</th><th title="tests that fail without the gold fix and pass with it">FAIL_TO_PASS</th><th title="tests that pass with and without it">PASS_TO_PASS</th><th>Flaky / broken</th></tr></thead>
                <tbody>{d.tasks.map((t) => <TaskRow key={t.instance_id} t={t} />)}</tbody>
              </table>
            </div>
          </>
        )}
      </QueryState>
      <CorpusReport />
      {adminToken.get() ? <ImportForm /> : <p className="hint">To import tasks, enter the admin token on the <Link to="/admin">admin page</Link>.</p>}
    </>
  );
}
