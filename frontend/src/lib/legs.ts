// The job legs a task's pipeline was chosen from, as the Tasks page lists them: what each leg's
// fate says in words, and how many of each fate there were.
import type { Schemas } from "../api/client";

export type Leg = Schemas["LegOut"];
export const LEG_STATUSES = ["chosen", "tried", "candidate", "rejected"] as const;

/** The words after a leg's status: a rejected leg's category and why, the outcome of a leg that
 * was tried (validation writes `tried: <outcome>`; a chosen leg may carry one when no leg was
 * valid), or why the leg was usable. */
export function legOutcome(leg: Leg): string {
  const tried = /^tried:\s*/.exec(leg.why);
  if (tried) return `outcome: ${leg.why.slice(tried[0].length)}`;
  if (leg.status === "rejected" && leg.category && !leg.why.startsWith(leg.category)) return `${leg.category}: ${leg.why}`;
  return leg.why;
}

/** `1 chosen, 2 tried, 3 rejected`: the fates in a fixed order, absent ones left out. */
export function legCounts(legs: readonly Leg[]): string {
  return LEG_STATUSES.map((s) => [s, legs.filter((l) => l.status === s).length] as const)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${s}`)
    .join(", ");
}
