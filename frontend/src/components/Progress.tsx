// A tournament's progress: matches done, failed, running and queued out of the total.
import type { TournamentOut } from "../api/client";

export function ProgressBar({ p }: { p: TournamentOut["progress"] }) {
  const total = p.total || 1;
  const parts: [string, number][] = [
    ["done", p.done], ["failed", p.failed], ["skipped", p.skipped + p.cancelled], ["running", p.running],
  ];
  const finished = p.done + p.failed + p.skipped + p.cancelled;
  return (
    <div className="progress" role="progressbar" aria-valuemin={0} aria-valuemax={p.total} aria-valuenow={finished} aria-label="matches finished">
      <div className="bar">
        {parts.map(([k, n]) => <span key={k} className={`seg ${k}`} style={{ width: `${(n / total) * 100}%` }} />)}
      </div>
      <span className="counts">
        {finished} / {p.total} finished · {p.done} done · {p.failed} failed · {p.running} running · {p.queued} queued
        {p.skipped + p.cancelled ? ` · ${p.skipped + p.cancelled} skipped or cancelled` : ""}
      </span>
    </div>
  );
}
