// Following a tournament's server-sent events: `progress` carries the tournament, `end` closes.
import { useEffect, useState } from "react";
import type { TournamentOut } from "../api/client";

export type Live = { tournament: TournamentOut | null; state: "connecting" | "live" | "ended" | "lost" };

export function useTournamentEvents(id: number, enabled: boolean, onEnd: () => void): Live {
  const [live, setLive] = useState<Live>({ tournament: null, state: "connecting" });
  useEffect(() => {
    if (!enabled) return;
    const source = new EventSource(new URL(`api/tournaments/${id}/events`, window.location.href));
    const read = (e: MessageEvent<string>) => JSON.parse(e.data) as TournamentOut;
    source.addEventListener("progress", (e) => setLive({ tournament: read(e), state: "live" }));
    source.addEventListener("end", (e) => {
      setLive({ tournament: read(e), state: "ended" });
      source.close();
      onEnd();
    });
    source.onerror = () => setLive((l) => (l.state === "ended" ? l : { ...l, state: "lost" }));
    return () => source.close();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [id, enabled]);
  return live;
}
