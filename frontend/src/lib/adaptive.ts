// An adaptive tournament in words: its goal, how far the board is from it, what it spent and
// what is left, and why it stopped. One place, so the tournament page and its list agree.
import type { Schemas } from "../api/client";
import { num, usd } from "./format";

export type AdaptiveProgress = Schemas["AdaptiveProgress"];
export type Goal = Schemas["Goal"];
export type Budget = Schemas["Budget"];

/** "adjacent intervals apart, or both at most 50 points wide" */
export function goalText(goal: Goal): string {
  const apart = goal.separate ? "adjacent intervals apart" : null;
  const narrow = goal.target_width != null ? `both at most ${num(goal.target_width)} points wide` : null;
  return [apart, narrow].filter(Boolean).join(", or ");
}

/** The stopping criterion against its target, as the command line's progress line says it. */
export function criterionText(a: AdaptiveProgress): string {
  if (a.widest_open === null) return "every neighbour resolved";
  const aim = a.target_width != null ? `target ${num(a.target_width)}` : "target: apart";
  return `widest open interval ${num(a.widest_open)} points (${aim})`;
}

const STOPS: Record<NonNullable<AdaptiveProgress["stop_reason"]>, string> = {
  goal: "its goal holds",
  budget: "its budget is spent",
  "no matches left": "no useful match was left to play",
};

export const stopText = (reason: AdaptiveProgress["stop_reason"]): string | null =>
  reason === null ? null : `stopped: ${STOPS[reason]}`;

const hours = (s: number): string => `${num(s / 3600, 2)} CI h`;

/** One line per spent quantity: "3 of 10 matches", "$0.42 of $5.00"; uncapped: spent only.
 * Money only once some was spent or a money cap is set: with no registered prices, "$0.00"
 * would read as free. */
export function spendingLines(a: AdaptiveProgress): string[] {
  const { spent, budget } = a;
  const of = (cap: number | null | undefined, shown: (v: number) => string): string =>
    cap == null ? "" : ` of ${shown(cap)}`;
  return [
    `${spent.matches}${of(budget.matches, String)} matches`,
    `${hours(spent.ci_seconds)}${of(budget.ci_hours == null ? null : budget.ci_hours * 3600, hours)}`,
    `${spent.tokens.toLocaleString("en-US")}${of(budget.tokens, (v) => v.toLocaleString("en-US"))} tokens`,
    ...(spent.money_usd > 0 || budget.money_usd != null
      ? [`${usd(spent.money_usd)}${of(budget.money_usd, usd)}`]
      : []),
  ];
}
