import { describe, expect, it } from "vitest";
import { apiQuery, filtersToParams, parseFilters, scopeLabel, withScope } from "./filters";

describe("leaderboard filters in the URL", () => {
  it("round-trip through search params", () => {
    const f = parseFilters(new URLSearchParams("language=go&tournament=3&sort=elo&desc=0"));
    expect(f).toMatchObject({ language: "go", tournament: 3, sort: "elo", desc: false });
    expect(parseFilters(filtersToParams(f))).toEqual(f);
  });
  it("ignore values the API would refuse", () => {
    const f = parseFilters(new URLSearchParams("language=cobol&kind=x&tournament=-1&created_after=yesterday"));
    expect(apiQuery(f)).toEqual({ language: undefined, role: undefined, kind: undefined, created_after: undefined, tournament: undefined });
  });
  it("keep one scope at a time, as the API requires", () => {
    const both = parseFilters(new URLSearchParams("language=go&kind=ci-judged"));
    expect(both.kind).toBeUndefined();
    const switched = withScope(both, "created_after", "2025-01-31");
    expect(switched).toMatchObject({ language: undefined, created_after: "2025-01-31" });
    expect(scopeLabel({ ...switched, tournament: 2 })).toBe("created_after=2025-01-31_tournament=2");
  });
});
