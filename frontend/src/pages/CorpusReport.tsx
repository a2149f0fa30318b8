// The corpus report on the Tasks page: how far each instance got (refused, imported, environment
// built, validated, playable) and why the rest stopped; counts per language and category, export.
import { useSearchParams } from "react-router";
import type { CorpusReport as Report } from "../api/client";
import { useCorpusReport } from "../api/queries";
import { QueryState } from "../components/Status";
import { REPORT_KEYS, STAGES, parseReportFilters, reportExportUrl, reportQuery } from "../lib/report";

const base = () => new URL(".", window.location.href).href;

function StageCounts({ report }: { report: Report }) {
  const totals = STAGES.map((s) => report.by_language.reduce((n, l) => n + (l.stages[s] ?? 0), 0));
  return (
    <div className="table-wrap">
      <table aria-label="Instances per language and stage">
        <caption className="hint">Instances per language, by the stage they stopped at</caption>
        <thead><tr><th>Language</th>{STAGES.map((s) => <th key={s}>{s}</th>)}<th>Total</th></tr></thead>
        <tbody>
          {report.by_language.map((l) => (
            <tr key={l.language}>
              <td>{l.language}</td>
              {STAGES.map((s) => <td key={s} data-stage={s} className="num">{l.stages[s] ?? 0}</td>)}
              <td className="num">{l.total}</td>
            </tr>
          ))}
        </tbody>
        <tfoot><tr><th>All</th>{totals.map((n, i) => <td key={STAGES[i]} className="num">{n}</td>)}<td className="num">{report.total}</td></tr></tfoot>
      </table>
    </div>
  );
}

function CategoryCounts({ report }: { report: Report }) {
  if (report.by_category.length === 0) return <p>Every instance is playable.</p>;
  return (
    <div className="table-wrap">
      <table aria-label="Why instances stopped">
        <caption className="hint">Why instances stopped</caption>
        <thead><tr><th>Category</th><th>Stopped at</th><th>Instances</th><th>Per language</th></tr></thead>
        <tbody>
          {report.by_category.map((c) => (
            <tr key={c.category}>
              <td>{c.category}</td>
              <td>{c.stage}</td>
              <td className="num">{c.count}</td>
              <td>{Object.entries(c.by_language).map(([l, n]) => <span key={l} className="chip">{l} {n}</span>)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function CorpusReport() {
  const [params, setParams] = useSearchParams();
  const filters = parseReportFilters(params);
  const report = useCorpusReport(reportQuery(filters));
  const set = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    setParams(next);
  };
  const languages = report.data?.by_language.map((l) => l.language) ?? [];
  return (
    <section className="card" aria-labelledby="corpus-report">
      <h2 id="corpus-report">Corpus report</h2>
      <p className="hint">
        Every instance imported or refused: refused (the import line did not become a task), imported (a task with a
        pipeline), environment built (or none needed), validated (valid on the task as it is now), playable (valid,
        its environment not known to be broken).
      </p>
      <QueryState query={report} what="the corpus report" empty={(d) => (d.total === 0 ? "Nothing imported or refused yet." : null)}>
        {(d) => (
          <>
            <StageCounts report={d} />
            <CategoryCounts report={d} />
            <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Report filters">
              <label>Report language
                <select value={filters.language ?? ""} onChange={(e) => set(REPORT_KEYS.language, e.target.value)}>
                  <option value="">all</option>
                  {[...new Set([...languages, ...(filters.language ? [filters.language] : [])])].map((l) => <option key={l}>{l}</option>)}
                </select>
              </label>
              <label>Report stage
                <select value={filters.stage ?? ""} onChange={(e) => set(REPORT_KEYS.stage, e.target.value)}>
                  <option value="">all</option>{STAGES.map((s) => <option key={s}>{s}</option>)}
                </select>
              </label>
              <p className="export">
                Export: <a href={reportExportUrl(base(), filters, "csv")} download>CSV</a>{" "}
                <a href={reportExportUrl(base(), filters, "json")} target="_blank" rel="noreferrer">JSON</a>
              </p>
            </form>
            <p>{d.rows.length} of {d.total} instances</p>
            <div className="table-wrap">
              <table aria-label="Corpus report">
                <thead><tr><th>Instance</th><th>Language</th><th>Stage</th><th>Category</th><th>Reason</th><th>Chosen leg</th></tr></thead>
                <tbody>
                  {d.rows.map((r) => (
                    <tr key={r.instance_id} data-stage={r.stage}>
                      <td className="mono">{r.instance_id}</td>
                      <td>{r.language}</td>
                      <td className={`stage-${r.stage.replace(" ", "-")}`}>{r.stage}</td>
                      <td>{r.category ?? "–"}</td>
                      <td className="reason">{r.reason ?? ""}</td>
                      <td className="mono">{r.chosen_leg ?? ""}{r.legs_considered ? ` (of ${r.legs_considered} legs)` : ""}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
      </QueryState>
    </section>
  );
}
