// The match page with hostile evidence: nothing executes, nothing is injected; big logs stay responsive.
import { expect, test } from "@playwright/test";

test("untrusted text is shown as text: no script runs, no element is injected", async ({ page }) => {
  const dialogs: string[] = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.goto("/#/matches/1");
  await expect(page.getByRole("heading", { name: "Issue" })).toBeVisible();
  await expect(page.getByTestId("round-winner").first()).toContainText("oracle");
  // open everything that hides evidence: runs, logs, tests, raw answers
  for (const summary of await page.locator("details.run > summary").all()) await summary.click();
  const show = page.getByRole("button", { name: /^Show/ });
  while ((await show.count()) > 0) await show.first().click();
  await expect(page.locator(".log").first()).toBeVisible();
  await page.screenshot({ path: "test-results/screens/match.png", fullPage: false });

  expect(await page.evaluate(() => (window as unknown as { __xss?: string }).__xss)).toBeUndefined();
  expect(dialogs).toEqual([]);
  // the hostile markup is visible as text, never as elements
  await expect(page.getByText("<script>").first()).toBeVisible();
  expect(await page.locator("main script, main img, main iframe").count()).toBe(0);
  expect(await page.locator("[onerror]").count()).toBe(0);
  const hrefs = await page.locator("main a").evaluateAll((as) => as.map((a) => a.getAttribute("href") ?? ""));
  expect(hrefs.filter((h) => /^\s*javascript:/i.test(h))).toEqual([]);
  // ANSI escapes are removed, not shown as garbage
  const text = await page.locator("main").innerText();
  expect(text).not.toContain("\u001b");
  expect(text).not.toContain("[31m");
});

test("a match with megabytes of logs stays responsive", async ({ page }) => {
  await page.goto("/#/matches/1");
  await expect(page.getByRole("heading", { name: "Issue" })).toBeVisible();
  await page.locator("details.run > summary").first().click();
  const started = Date.now();
  await page.getByRole("button", { name: /Show log of test .*MB/ }).first().click();
  const log = page.locator(".log").first();
  await expect(log).toBeVisible();
  const elapsed = Date.now() - started;
  console.log(`3 MB log opened in ${elapsed} ms`);
  expect(elapsed).toBeLessThan(2000);
  // only the visible lines exist in the page, however long the log
  expect(await log.locator(".log-line").count()).toBeLessThan(200);
  await log.evaluate((el) => (el.scrollTop = el.scrollHeight));
  await expect(log.locator(".log-line").last()).toBeVisible();
});
