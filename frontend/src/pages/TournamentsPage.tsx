// Tournaments: the list, and (with the admin token) a form to start one.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Link, useNavigate } from "react-router";
import { adminToken, api, unwrap } from "../api/client";
import { useModels, useTournaments } from "../api/queries";
import { ProgressBar } from "../components/Progress";
import { ErrorBox, QueryState } from "../components/Status";
import { KINDS, LANGUAGES } from "../lib/filters";
import { when } from "../lib/format";

type TaskChoice = "demo" | "ids" | "selection";

function StartForm() {
  const models = useModels();
  const client = useQueryClient();
  const navigate = useNavigate();
  const [picked, setPicked] = useState<string[]>([]);
  const [choice, setChoice] = useState<TaskChoice>("demo");
  const [ids, setIds] = useState("");
  const [sel, setSel] = useState({ language: "", kind: "", repo: "" });
  const [budget, setBudget] = useState(6000);
  const [adaptive, setAdaptive] = useState(false);
  const [width, setWidth] = useState("");
  const [maxMatches, setMaxMatches] = useState("");
  const start = useMutation({
    mutationFn: () => {
      const tasks =
        choice === "demo"
          ? ("demo" as const)
          : choice === "ids"
            ? ids.split(/[\s,]+/).filter(Boolean)
            : {
                language: (sel.language || undefined) as (typeof LANGUAGES)[number] | undefined,
                kind: (sel.kind || undefined) as (typeof KINDS)[number] | undefined,
                repo: sel.repo || undefined,
                validity: "valid" as const,
              };
      const settings = { context_budget_tokens: budget };
      const goal = { separate: true, target_width: width ? Number(width) : null };
      const chosen = adaptive
        ? { mode: "adaptive" as const, adaptive: { goal, budget: { matches: maxMatches ? Number(maxMatches) : null }, in_flight: 4 } }
        : { mode: "round_robin" as const, adaptive: null };
      return unwrap(api.POST("/api/tournaments", { body: { models: picked, tasks, settings, ...chosen } }));
    },
    onSuccess: (t) => {
      void client.invalidateQueries({ queryKey: ["tournaments"] });
      void navigate(`/tournaments/${t.id}`);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    start.mutate();
  };
  return (
    <form className="card start" onSubmit={submit} aria-label="Start a tournament">
      <h2>Start a tournament</h2>
      <fieldset>
        <legend>Models (at least two)</legend>
        <QueryState query={models} what="models">
          {(d) =>
            d.models.map((m) => (
              <label key={m.name} className="check">
                <input
                  type="checkbox"
                  name="model"
                  value={m.name}
                  checked={picked.includes(m.name)}
                  onChange={(e) => setPicked(e.target.checked ? [...picked, m.name] : picked.filter((p) => p !== m.name))}
                />
                {m.name}
              </label>
            ))
          }
        </QueryState>
      </fieldset>
      <fieldset>
        <legend>Tasks</legend>
        {(["demo", "ids", "selection"] as const).map((c) => (
          <label key={c} className="check">
            <input type="radio" name="tasks" value={c} checked={choice === c} onChange={() => setChoice(c)} />
            {{ demo: "the demo corpus", ids: "these instance ids", selection: "every valid task matching" }[c]}
          </label>
        ))}
        {choice === "ids" && (
          <label>
            Instance ids (space or comma separated)
            <textarea value={ids} onChange={(e) => setIds(e.target.value)} rows={3} />
          </label>
        )}
        {choice === "selection" && (
          <div className="row">
            <label>Language
              <select value={sel.language} onChange={(e) => setSel({ ...sel, language: e.target.value })}>
                <option value="">any</option>{LANGUAGES.map((l) => <option key={l}>{l}</option>)}
              </select>
            </label>
            <label>Kind
              <select value={sel.kind} onChange={(e) => setSel({ ...sel, kind: e.target.value })}>
                <option value="">any</option>{KINDS.map((l) => <option key={l}>{l}</option>)}
              </select>
            </label>
            <label>Repo contains
              <input value={sel.repo} onChange={(e) => setSel({ ...sel, repo: e.target.value })} />
            </label>
          </div>
        )}
      </fieldset>
      <label>
        Retrieval context budget (tokens)
        <input type="number" min={500} max={1000000} step={500} value={budget} onChange={(e) => setBudget(Number(e.target.value))} />
      </label>
      <fieldset>
        <legend>Mode</legend>
        <label className="check">
          <input type="checkbox" checked={adaptive} onChange={(e) => setAdaptive(e.target.checked)} />
          adaptive: play the most informative matches until neighbours are apart (or narrow enough)
        </label>
        {adaptive && (
          <div className="row">
            <label>Target interval width (points, optional)
              <input type="number" min={1} value={width} onChange={(e) => setWidth(e.target.value)} />
            </label>
            <label>At most this many matches (optional)
              <input type="number" min={1} value={maxMatches} onChange={(e) => setMaxMatches(e.target.value)} />
            </label>
          </div>
        )}
      </fieldset>
      <button type="submit" disabled={picked.length < 2 || start.isPending}>
        {start.isPending ? "Starting…" : "Start"}
      </button>
      {picked.length < 2 && <span className="hint"> pick at least two models</span>}
      {start.error && <ErrorBox error={start.error} />}
    </form>
  );
}

export function TournamentsPage() {
  const list = useTournaments();
  return (
    <>
      <h1>Tournaments</h1>
      {adminToken.get() ? <StartForm /> : <p className="hint">To start a tournament, enter the admin token on the <Link to="/admin">admin page</Link>.</p>}
      <QueryState query={list} what="tournaments" empty={(d) => (d.tournaments.length === 0 ? "No tournaments yet." : null)}>
        {(d) => (
          <div className="table-wrap">
            <table aria-label="Tournaments">
              <thead><tr><th>#</th><th>Status</th><th>Mode</th><th>Models</th><th>Tasks</th><th>Progress</th><th>Started</th></tr></thead>
              <tbody>
                {d.tournaments.map((t) => (
                  <tr key={t.id}>
                    <td><Link to={`/tournaments/${t.id}`}>#{t.id}</Link></td>
                    <td>{t.status}{t.adaptive?.stop_reason ? ` (${t.adaptive.stop_reason})` : ""}</td>
                    <td>{t.mode === "adaptive" ? "adaptive" : "round robin"}</td>
                    <td>{t.models.join(", ")}</td>
                    <td>{t.tasks}</td>
                    <td><ProgressBar p={t.progress} /></td>
                    <td>{when(t.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </QueryState>
    </>
  );
}
