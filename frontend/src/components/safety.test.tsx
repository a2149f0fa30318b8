import { render } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { DiffView } from "./DiffView";
import { Markdown } from "./Markdown";

const HOSTILE = '<script>window.__x=1</script><img src=x onerror="window.__x=2"> [go](javascript:window.__x=3) \u001b[31mred\u001b[0m';

describe("untrusted text", () => {
  it("markdown drops raw HTML and javascript: links", () => {
    const { container } = render(<Markdown text={`# Title\n\nSee ${HOSTILE}\n\n[ok](https://example.com)`} />);
    expect(container.querySelector("script, img, [onerror]")).toBeNull();
    const hrefs = [...container.querySelectorAll("a")].map((a) => a.getAttribute("href"));
    expect(hrefs).toEqual(["https://example.com"]);
    expect(container.textContent).toContain("red");
    expect(container.textContent).not.toContain("\u001b");
  });
  it("diffs show their lines as text", () => {
    const diff = `diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old\n+${HOSTILE}\n`;
    const { container } = render(<DiffView diff={diff} label="patch" />);
    expect(container.querySelector("script, img")).toBeNull();
    expect(container.querySelector("tr.add")?.textContent).toContain("<script>");
  });
});
