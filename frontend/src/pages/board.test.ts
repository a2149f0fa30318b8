import { describe as suite, expect, it } from "vitest";
import type { Leaderboard } from "../api/client";
import { rate, usd } from "../lib/format";
import { type BoardRow, describe, perPointText, provisionalNote } from "./LeaderboardPage";

const board = (over: Partial<Leaderboard>): Leaderboard => ({
  language: null, kind: null, role: null, window: null, tournament: null, computed_at: null, current: true, match_count: 0, provisional_below: 10, goal: null, rows: [],
  ...over,
});

suite("the leaderboard's words", () => {
  it("says every combined filter of the board", () => {
    expect(describe(board({}))).toBe("all languages, all task kinds, all tasks");
    expect(describe(board({ language: "go", kind: "ci-judged", window: "cutoff", role: "reviewer", tournament: 4 }))).toBe(
      "go, ci-judged, tasks opened after each model's cutoff, ranked as reviewer, tournament #4",
    );
    expect(describe(board({ window: "after:2025-02-01" }))).toContain("tasks opened after 2025-02-01");
  });
  it("shows a rate with what it is a share of", () => {
    expect(rate(0.75, 8)).toBe("75% of 8");
    expect(rate(null, 0)).toBe("no chances");
    expect(rate(0, 3)).toBe("0% of 3");
  });
  it("says why a row is provisional, with the board's own threshold", () => {
    expect(provisionalNote(10)).toContain("fewer than 10 matches");
    expect(provisionalNote(10, null)).toContain("fewer than 10 matches");
  });
  it("on an adaptive tournament's board, provisional means its goal does not hold yet", () => {
    const note = provisionalNote(10, { target_width: 80, separate: true });
    expect(note).toContain("adjacent intervals apart, or both at most 80 points wide");
    expect(note).not.toContain("fewer than");
  });
});

suite("cost per point", () => {
  const row = { per_point: { tokens: 1234.4, ci_seconds: 2.35, cost: 0.0125 }, narrowed: 300 } as unknown as BoardRow;
  it("shows tokens, CI time and money per point narrowed, each where known", () => {
    expect(perPointText(row)).toBe(`1,234 tok · 2.4 CI s · ${usd(0.0125)}`);
    const unpriced = { ...row, per_point: { tokens: 10, ci_seconds: null, cost: null } } as BoardRow;
    expect(perPointText(unpriced)).toBe("10 tok");
    expect(perPointText({ ...row, per_point: null } as BoardRow)).toBe("–");
  });
});
