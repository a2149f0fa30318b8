import { describe, expect, it } from "vitest";
import { criterionText, goalText, spendingLines, stopText, type AdaptiveProgress } from "./adaptive";

const progress: AdaptiveProgress = {
  goal: { target_width: 50, separate: true },
  budget: { matches: 10, ci_hours: 1, tokens: null, money_usd: 5, per_model_matches: null },
  in_flight: 2,
  spent: { matches: 3, ci_seconds: 1800, tokens: 12000, money_usd: 0.42 },
  left: { matches: 5, ci_seconds: 1800, tokens: null, money_usd: 4.58 },
  widest_open: 212.4,
  target_width: 50,
  matches_to_finish: 40,
  stop_reason: null,
  placing: [],
};

describe("adaptive tournament wording", () => {
  it("says the goal in words", () => {
    expect(goalText(progress.goal)).toBe("adjacent intervals apart, or both at most 50 points wide");
    expect(goalText({ target_width: null, separate: true })).toBe("adjacent intervals apart");
  });
  it("puts the criterion against its target, and says when it holds", () => {
    expect(criterionText(progress)).toBe("widest open interval 212 points (target 50)");
    expect(criterionText({ ...progress, widest_open: null })).toBe("every neighbour resolved");
    expect(criterionText({ ...progress, target_width: null })).toContain("target: apart");
  });
  it("shows spending against each cap, uncapped ones as spent only", () => {
    expect(spendingLines(progress)).toEqual(["3 of 10 matches", "0.50 CI h of 1.00 CI h", "12,000 tokens", "$0.42 of $5.00"]);
  });
  it("leaves money out while none is spent and none is capped (no prices: not free)", () => {
    const unpriced = { ...progress, spent: { ...progress.spent, money_usd: 0 }, budget: { ...progress.budget, money_usd: null } };
    expect(spendingLines(unpriced)).toEqual(["3 of 10 matches", "0.50 CI h of 1.00 CI h", "12,000 tokens"]);
  });
  it("names why it stopped", () => {
    expect(stopText(null)).toBeNull();
    expect(stopText("budget")).toBe("stopped: its budget is spent");
    expect(stopText("no matches left")).toBe("stopped: no useful match was left to play");
  });
});
