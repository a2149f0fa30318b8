// The corpus report on the Tasks page: refused and imported instances seeded through the store
// (frontend/tests/seeded_api.py), counts, filters in the URL, and the CSV export.
import { readFile } from "node:fs/promises";
import { expect, test } from "@playwright/test";

test("the corpus report shows each instance's stage and why the rest stop, filters and exports", async ({ page }) => {
  await page.setViewportSize({ width: 1400, height: 900 });
  await page.goto("/#/tasks");
  const section = page.getByRole("region", { name: "Corpus report" });
  await expect(section).toBeVisible();

  const counts = section.getByRole("table", { name: "Instances per language and stage" });
  const go = counts.locator("tbody tr", { hasText: "go" });
  await expect(go.locator("td[data-stage='refused']")).toHaveText("1");
  await expect(go.locator("td[data-stage='environment built']")).toHaveText("1");
  const reasons = section.getByRole("table", { name: "Why instances stopped" });
  for (const category of ["repo not reachable", "needs conda", "Windows or macOS only", "dataset line inconsistent",
    "gold tests do not fail without the fix"]) {
    await expect(reasons).toContainText(category);
  }

  const rows = section.getByRole("table", { name: "Corpus report" }).locator("tbody tr");
  await expect(rows.filter({ hasText: "go__gin-101" })).toContainText("cannot clone");
  await expect(rows.filter({ hasText: "demo__go-lru-recency" })).toContainText("environment built");
  await expect(rows.filter({ hasText: "rust_filtered_instance_list.jsonl:4" })).toContainText("refused");
  await page.screenshot({ path: "test-results/screens/tasks-report.png", fullPage: true });

  await section.getByLabel("Report stage").selectOption("refused");
  await expect(page).toHaveURL(/report_stage=refused/);
  await expect(rows).toHaveCount(4);
  await section.getByLabel("Report language").selectOption("go");
  await expect(page).toHaveURL(/report_language=go/);
  await expect(rows).toHaveCount(1);
  const url = page.url();
  await page.goto("about:blank");
  await page.goto(url);
  await expect(section.getByLabel("Report stage")).toHaveValue("refused");
  await expect(rows).toHaveCount(1);

  const csvLink = section.getByRole("link", { name: "CSV" });
  await expect(csvLink).toHaveAttribute("href", /api\/tasks\/report\?language=go&stage=refused&format=csv$/);
  const [download] = await Promise.all([page.waitForEvent("download"), csvLink.click()]);
  expect(download.suggestedFilename()).toBe("corpus-report_go_refused.csv");
  const text = await readFile((await download.path()) ?? "", "utf8");
  expect(text.split("\r\n")[0]).toBe("instance_id,language,repo,stage,category,reason,chosen_leg,legs_considered,source_file");
  expect(text).toContain("go__gin-101,go,");
  expect(text.trim().split("\r\n")).toHaveLength(2);
  const json = await page.request.get(await section.getByRole("link", { name: "JSON" }).getAttribute("href") ?? "");
  expect((await json.json()).rows).toHaveLength(1);
});
