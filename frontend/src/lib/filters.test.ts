import { describe, expect, it } from "vitest";
import { apiQuery, filtersToParams, parseFilters, scopeLabel, withWindow } from "./filters";

describe("leaderboard filters in the URL", () => {
  it("round-trip through search params, combined", () => {
    const f = parseFilters(new URLSearchParams("language=go&kind=ci-judged&role=reviewer&after_cutoff=1&tournament=3&sort=elo&desc=0"));
    expect(f).toMatchObject({ language: "go", kind: "ci-judged", role: "reviewer", after_cutoff: true, tournament: 3, sort: "elo", desc: false });
    expect(parseFilters(filtersToParams(f))).toEqual(f);
  });
  it("ignore values the API would refuse", () => {
    const f = parseFilters(new URLSearchParams("language=cobol&kind=x&tournament=-1&created_after=yesterday&after_cutoff=yes"));
    expect(apiQuery(f)).toEqual({
      language: undefined, role: undefined, kind: undefined, after_cutoff: undefined, created_after: undefined, tournament: undefined,
    });
  });
  it("keep one task-date window at a time, as the API requires", () => {
    const both = parseFilters(new URLSearchParams("language=go&after_cutoff=1&created_after=2025-01-31"));
    expect(both).toMatchObject({ language: "go", after_cutoff: true, created_after: undefined });
    const byDay = withWindow(both, "date", "2025-01-31");
    expect(byDay).toMatchObject({ language: "go", after_cutoff: undefined, created_after: "2025-01-31" });
    expect(scopeLabel({ ...byDay, tournament: 2 })).toBe("language=go_created_after=2025-01-31_tournament=2");
    expect(scopeLabel(withWindow(byDay, "cutoff"))).toBe("language=go_after_cutoff");
    expect(withWindow(byDay, "")).toMatchObject({ after_cutoff: undefined, created_after: undefined });
  });
});
