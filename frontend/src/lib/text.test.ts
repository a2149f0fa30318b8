import { describe, expect, it } from "vitest";
import { logLines, safeUrl, stripAnsi } from "./text";

describe("stripAnsi", () => {
  it("removes colours, OSC titles and lone escapes, keeps the text", () => {
    expect(stripAnsi("\u001b[31mred\u001b[0m \u001b]0;title\u0007ok \u001b[2K\u001bMdone")).toBe("red ok done");
  });
});

describe("safeUrl", () => {
  it("keeps web and relative links", () => {
    expect(safeUrl("https://example.com/x")).toBe("https://example.com/x");
    expect(safeUrl("mailto:a@b.c")).toBe("mailto:a@b.c");
    expect(safeUrl("#/matches/1")).toBe("#/matches/1");
  });
  it("drops script and data links, however they are disguised", () => {
    expect(safeUrl("javascript:alert(1)")).toBe("");
    expect(safeUrl("JaVaScRiPt:alert(1)")).toBe("");
    expect(safeUrl("java\tscript:alert(1)")).toBe("");
    expect(safeUrl(" \u0000javascript:alert(1)")).toBe("");
    expect(safeUrl("data:text/html,<script>")).toBe("");
    expect(safeUrl("vbscript:x")).toBe("");
  });
});

describe("logLines", () => {
  it("splits on any newline after stripping escapes", () => {
    expect(logLines("a\r\n\u001b[1mb\u001b[0m\nc")).toEqual(["a", "b", "c"]);
  });
});
