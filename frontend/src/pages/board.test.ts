import { describe, expect, it } from "vitest";
import type { LeaderboardRow, ModelOut } from "../api/client";
import { boardRows } from "./LeaderboardPage";

const row = (model: string, rating: number): LeaderboardRow => ({
  model, rating, ci_low: rating - 10, ci_high: rating + 10, rank_ub: 1, matches: 3, wins: 1, losses: 1, ties: 1, elo: rating, cost: null, latency: null,
});

describe("boardRows", () => {
  it("joins per-role ratings and model metadata by name", () => {
    const models = [{ name: "a", organization: "Org A", license: "MIT" } as ModelOut];
    const rows = boardRows([row("a", 1100), row("b", 900)], models, [row("a", 1200)], [row("b", 800)]);
    expect(rows[0]).toMatchObject({ model: "a", submitter_rating: 1200, reviewer_rating: null, organization: "Org A", license: "MIT" });
    expect(rows[1]).toMatchObject({ model: "b", submitter_rating: null, reviewer_rating: 800, organization: null });
  });
});
