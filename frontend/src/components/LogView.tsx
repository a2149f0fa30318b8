// A CI step's log: collapsed until asked for, then virtualized, so megabytes stay responsive.
import { useVirtualizer } from "@tanstack/react-virtual";
import { useMemo, useRef, useState } from "react";
import { logLines } from "../lib/text";

const LINE_PX = 18;

function Lines({ log }: { log: string }) {
  const lines = useMemo(() => logLines(log), [log]);
  const parent = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({ count: lines.length, getScrollElement: () => parent.current, estimateSize: () => LINE_PX, overscan: 20 });
  return (
    <div ref={parent} className="log" tabIndex={0} aria-label={`log, ${lines.length} lines`}>
      <div style={{ height: virtual.getTotalSize(), position: "relative" }}>
        {virtual.getVirtualItems().map((item) => (
          <div key={item.key} className="log-line" style={{ transform: `translateY(${item.start}px)`, height: LINE_PX }}>
            <span className="ln">{item.index + 1}</span>
            {lines[item.index]}
          </div>
        ))}
      </div>
    </div>
  );
}

export function LogView({ log, title }: { log: string; title: string }) {
  const [open, setOpen] = useState(false);
  const size = log.length > 1e6 ? `${(log.length / 1e6).toFixed(1)} MB` : `${Math.ceil(log.length / 1e3)} kB`;
  return (
    <div className="logview">
      <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? "Hide" : "Show"} log of {title} ({size})
      </button>
      {open && <Lines log={log} />}
    </div>
  );
}
