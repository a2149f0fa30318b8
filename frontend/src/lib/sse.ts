// Following a tournament's server-sent events: `progress` carries the tournament, `end` closes.
// The server closes a stream that saw no change for a while (`idle`) and refuses streams beyond
// its caps (429): an idle stream is reopened while the tab is shown, a refused or lost one after
// a pause, since the browser retries neither by itself.
import { useEffect, useState } from "react";
import type { TournamentOut } from "../api/client";

export type Live = { tournament: TournamentOut | null; state: "connecting" | "live" | "ended" | "lost" | "paused" };

const RETRY_MS = 30_000; // the server's default Retry-After for a refused stream

export const liveLabel: Record<Live["state"], string> = {
  connecting: "connecting",
  live: "live",
  ended: "ended",
  lost: "connection lost, retrying",
  paused: "paused while this tab is hidden (no change for a while)",
};

export function useTournamentEvents(id: number, enabled: boolean, onEnd: () => void): Live {
  const [live, setLive] = useState<Live>({ tournament: null, state: "connecting" });
  useEffect(() => {
    if (!enabled) return;
    let source: EventSource | null = null;
    let retry: number | undefined;
    let stopped = false;
    const read = (e: MessageEvent<string>) => JSON.parse(e.data) as TournamentOut;
    const whenShown = () => {
      if (document.visibilityState !== "visible") return;
      document.removeEventListener("visibilitychange", whenShown);
      open();
    };
    function open() {
      if (stopped) return;
      source?.close();
      setLive((l) => ({ ...l, state: l.state === "live" ? "live" : "connecting" }));
      const current = new EventSource(new URL(`api/tournaments/${id}/events`, window.location.href));
      source = current;
      current.addEventListener("progress", (e) => setLive({ tournament: read(e), state: "live" }));
      current.addEventListener("end", (e) => {
        setLive({ tournament: read(e), state: "ended" });
        current.close();
        onEnd();
      });
      current.addEventListener("idle", () => {
        current.close();
        if (document.visibilityState === "visible") {
          open();
          return;
        }
        setLive((l) => ({ ...l, state: "paused" }));
        document.addEventListener("visibilitychange", whenShown);
      });
      current.onerror = () => {
        setLive((l) => (l.state === "ended" ? l : { ...l, state: "lost" }));
        // closed for good (refused: too many streams, or an error status): try again later
        if (current.readyState === EventSource.CLOSED) retry = window.setTimeout(open, RETRY_MS);
      };
    }
    open();
    return () => {
      stopped = true;
      source?.close();
      window.clearTimeout(retry);
      document.removeEventListener("visibilitychange", whenShown);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [id, enabled]);
  return live;
}
