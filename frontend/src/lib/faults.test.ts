import { describe, expect, it } from "vitest";
import { faultLabel, modelAtFaultLine } from "./faults";

describe("faultLabel", () => {
  it("names the model whose endpoint failed the match", () => {
    expect(faultLabel("model_endpoint", "m1")).toBe("model m1's endpoint");
  });
  it("names the component otherwise, and nothing when the fault is not known", () => {
    expect(faultLabel("sandbox", null)).toBe("the sandbox");
    expect(faultLabel("worker", null)).toBe("the worker");
    expect(faultLabel("infrastructure", null)).toBe("infrastructure");
    expect(faultLabel(null, null)).toBeNull();
  });
});

describe("modelAtFaultLine", () => {
  it("reads as the command line's warning", () => {
    expect(modelAtFaultLine({ model: "dead", matches: 2, last_reason: "HTTP 401" })).toBe(
      "model dead's endpoint is at fault in 2 match(es)",
    );
  });
});
