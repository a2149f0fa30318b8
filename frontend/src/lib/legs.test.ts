import { describe, expect, it } from "vitest";
import { legCounts, legOutcome, type Leg } from "./legs";

const leg = (status: Leg["status"], why: string, category: string | null = null): Leg => ({
  leg: "test (3.12)", workflow: "ci.yml", job_id: "test", status, why, category, rank: status === "rejected" ? null : 1,
});

describe("legs considered", () => {
  it("say a tried leg's outcome once, and a rejected leg's category with its why", () => {
    expect(legOutcome(leg("tried", "tried: no test fails without the gold patch"))).toBe(
      "outcome: no test fails without the gold patch",
    );
    expect(legOutcome(leg("rejected", "runs on windows-latest", "Windows or macOS only"))).toBe(
      "Windows or macOS only: runs on windows-latest",
    );
    expect(legOutcome(leg("rejected", "conda job (unsupported): uses conda", "conda job (unsupported)"))).toBe(
      "conda job (unsupported): uses conda",
    );
    expect(legOutcome(leg("chosen", "Linux, runs pytest"))).toBe("Linux, runs pytest");
    expect(legOutcome(leg("chosen", "tried: no test fails"))).toBe("outcome: no test fails"); // none was valid
  });
  it("count the fates in a fixed order", () => {
    expect(legCounts([leg("rejected", "x"), leg("chosen", "y"), leg("rejected", "z")])).toBe("1 chosen, 2 rejected");
    expect(legCounts([])).toBe("");
  });
});
