// Ratings with their 95% intervals as a chart beside the table (Observable Plot).
import * as Plot from "@observablehq/plot";
import { useEffect, useRef } from "react";
import type { LeaderboardRow } from "../api/client";

export function RatingsChart({ rows }: { rows: LeaderboardRow[] }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const rated = rows.filter((r) => r.rating !== null);
    const chart = Plot.plot({
      width: ref.current?.clientWidth || 360,
      height: Math.max(120, rated.length * 16 + 40),
      marginLeft: 110,
      x: { label: "Bradley-Terry rating (95% interval)", grid: true },
      y: { label: null, domain: rated.map((r) => r.model) },
      marks: [
        Plot.ruleY(rated, { y: "model", x1: (r: LeaderboardRow) => r.ci_low ?? r.rating, x2: (r: LeaderboardRow) => r.ci_high ?? r.rating, stroke: "#7a8ca5", strokeWidth: 3 }),
        Plot.dot(rated, { y: "model", x: "rating", fill: "#1f4e8c", r: 3.5 }),
      ],
    });
    ref.current?.replaceChildren(chart);
    return () => chart.remove();
  }, [rows]);
  return <div ref={ref} className="chart" role="img" aria-label="Ratings with 95% intervals" />;
}
