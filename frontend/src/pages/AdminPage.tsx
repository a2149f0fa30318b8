// Admin: the token (kept in session storage), and registering, editing and retiring models.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { adminToken, api, unwrap, type ModelOut, type Schemas } from "../api/client";
import { useModels } from "../api/queries";
import { ErrorBox, QueryState } from "../components/Status";

type Fields = Record<string, string>;

const TEXT = ["base_url", "model", "api_key", "api_key_env", "organization", "license"] as const;
const NUMBERS = ["temperature", "max_tokens", "timeout_s", "max_concurrency", "price_input_per_mtok", "price_output_per_mtok"] as const;
const DATES = ["release_date", "knowledge_cutoff"] as const;

/** Form fields to a request body: blanks are left out, numbers parsed, the rest kept as typed. */
export function modelBody(fields: Fields): Record<string, string | number | boolean> {
  const body: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (v.trim() === "") continue;
    if ((NUMBERS as readonly string[]).includes(k)) body[k] = Number(v);
    else if (k === "open_weights") body[k] = v === "yes";
    else body[k] = v.trim();
  }
  return body;
}

function ModelForm({ model, onDone }: { model?: ModelOut; onDone: () => void }) {
  const client = useQueryClient();
  const [fields, setFields] = useState<Fields>(() =>
    model
      ? Object.fromEntries([...TEXT, ...NUMBERS, ...DATES].filter((k) => k !== "api_key").map((k) => [k, String((model as Record<string, unknown>)[k] ?? "")]))
      : {},
  );
  const [check, setCheck] = useState(false);
  const save = useMutation({
    mutationFn: () => {
      const body = modelBody(fields);
      return model
        ? unwrap(api.PATCH("/api/models/{name}", { params: { path: { name: model.name }, query: { check } }, body: body as Schemas["ModelUpdate"] }))
        : unwrap(api.POST("/api/models", { params: { query: { check } }, body: body as Schemas["ModelCreate"] }));
    },
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ["models"] });
      onDone();
    },
  });
  const input = (k: string, type = "text") => (
    <label key={k}>
      {k}
      <input type={type} name={k} step={type === "number" ? "any" : undefined} value={fields[k] ?? ""} onChange={(e) => setFields({ ...fields, [k]: e.target.value })} autoComplete="off" />
    </label>
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  return (
    <form className="card model-form" onSubmit={submit} aria-label={model ? `Edit ${model.name}` : "Register a model"}>
      <h2>{model ? `Edit ${model.name}` : "Register a model"}</h2>
      <div className="grid">
        {!model && input("name")}
        {TEXT.map((k) => input(k, k === "api_key" ? "password" : "text"))}
        {NUMBERS.map((k) => input(k, "number"))}
        {DATES.map((k) => input(k, "date"))}
      </div>
      {model && <p className="hint">Blank fields stay as they are; the stored API key is never shown{model.has_api_key ? " (one is stored)" : ""}.</p>}
      <label className="check"><input type="checkbox" checked={check} onChange={(e) => setCheck(e.target.checked)} /> check the endpoint with one tiny request</label>
      <button type="submit" disabled={save.isPending}>{save.isPending ? "Saving…" : model ? "Save" : "Register"}</button>{" "}
      {model && <button type="button" onClick={onDone}>Cancel</button>}
      {save.error && <ErrorBox error={save.error} />}
    </form>
  );
}

function Models() {
  const models = useModels(true);
  const client = useQueryClient();
  const [editing, setEditing] = useState<string | null>(null);
  const retire = useMutation({
    mutationFn: (name: string) => unwrap(api.DELETE("/api/models/{name}", { params: { path: { name } } })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ["models"] }),
  });
  return (
    <>
      <QueryState query={models} what="models">
        {(d) => (
          <div className="table-wrap">
            <table aria-label="Models">
              <thead><tr><th>Name</th><th>Kind</th><th>Endpoint</th><th>Key</th><th>Organization</th><th>State</th><th>Actions</th></tr></thead>
              <tbody>
                {d.models.map((m) => (
                  <tr key={m.name}>
                    <td>{m.name}</td><td>{m.kind}</td>
                    <td className="mono">{m.base_url ? `${m.base_url} · ${m.model}` : "–"}</td>
                    <td>{m.has_api_key ? "stored" : m.api_key_env ? `$${m.api_key_env}` : "–"}</td>
                    <td>{m.organization ?? "–"}</td>
                    <td>{m.retired ? "retired" : "active"}</td>
                    <td>
                      {m.kind === "openai" && !m.retired && (
                        <>
                          <button type="button" onClick={() => setEditing(m.name)}>Edit</button>{" "}
                          <button type="button" onClick={() => window.confirm(`Retire ${m.name}? Its history is kept.`) && retire.mutate(m.name)}>Retire</button>
                        </>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </QueryState>
      {retire.error && <ErrorBox error={retire.error} />}
      {editing && models.data && (
        <ModelForm key={editing} model={models.data.models.find((m) => m.name === editing)} onDone={() => setEditing(null)} />
      )}
      <ModelForm onDone={() => undefined} />
    </>
  );
}

export function AdminPage() {
  const [token, setToken] = useState(adminToken.get());
  const [typed, setTyped] = useState("");
  const save = (e: FormEvent) => {
    e.preventDefault();
    adminToken.set(typed);
    setToken(typed);
    setTyped("");
  };
  return (
    <>
      <h1>Admin</h1>
      {token ? (
        <p>
          The admin token is set for this tab (session storage).{" "}
          <button type="button" onClick={() => { adminToken.clear(); setToken(null); }}>Forget it</button>
        </p>
      ) : (
        <form className="card" onSubmit={save} aria-label="Admin token">
          <label>Admin token (ARENA_ADMIN_TOKEN)
            <input type="password" value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" />
          </label>
          <button type="submit" disabled={!typed}>Use it</button>
          <p className="hint">Kept in this tab's session storage only; every write sends it as a bearer token.</p>
        </form>
      )}
      {token ? <Models /> : <p className="hint">Writes need the token: enter it above to register, edit or retire models.</p>}
    </>
  );
}
