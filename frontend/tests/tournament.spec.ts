// A tournament started from the form is played by the real workers, shows live progress and
// ends on its leaderboard.
import { expect, test } from "@playwright/test";

test("start a tournament from the form, follow it live, see it on the leaderboard", async ({ page }) => {
  test.setTimeout(600_000);
  await page.goto("/#/tournaments");
  await expect(page.getByText("enter the admin token")).toBeVisible();
  await page.goto("/#/admin");
  await page.getByRole("textbox", { name: /Admin token/ }).fill("web-admin-token");
  await page.getByRole("button", { name: "Use it" }).click();
  await expect(page.getByRole("table", { name: "Models" })).toContainText("oracle");
  await page.screenshot({ path: "test-results/screens/admin.png", fullPage: true });
  // the task it plays comes in through the import form (seeded_api.py wrote the file)
  await page.goto("/#/tasks");
  const upload = page.getByRole("form", { name: "Import tasks" });
  await upload.getByLabel(/JSONL or SwingArena file/).setInputFiles("test-results/seed/import.jsonl");
  await upload.getByRole("button", { name: "Import" }).click();
  await expect(upload.getByRole("status")).toContainText("1 imported (1 new), 0 bad lines");
  await expect(page.getByRole("table", { name: "Tasks" })).toContainText("demo__py-textkit-slug");
  await page.screenshot({ path: "test-results/screens/tasks-imported.png", fullPage: true });
  await page.goto("/#/tournaments");
  const form = page.getByRole("form", { name: "Start a tournament" });
  await form.getByLabel("oracle").check();
  await form.getByLabel("null").check();
  await form.getByLabel("these instance ids").check();
  await form.getByLabel(/Instance ids/).fill("demo__py-textkit-slug");
  await form.getByRole("button", { name: "Start" }).click();
  await expect(page).toHaveURL(/#\/tournaments\/\d+$/);
  // the hash changes before the list unmounts: wait for the tournament's own page, whose one
  // progress bar is then the only one (the list shows one per earlier tournament)
  await expect(page.getByRole("heading", { name: /^Tournament #\d+$/ })).toBeVisible();
  await expect(page.getByTestId("tournament-status")).toBeVisible();
  await expect(page.getByRole("progressbar")).toHaveCount(1);
  await expect(page.getByRole("progressbar")).toBeVisible();
  await page.screenshot({ path: "test-results/screens/tournament-live.png", fullPage: true });
  await expect(page.getByTestId("tournament-status")).toHaveText("done", { timeout: 540_000 });
  await page.screenshot({ path: "test-results/screens/tournament-done.png", fullPage: true });
  await page.getByRole("link", { name: "Leaderboard of this tournament" }).click();
  await expect(page.locator("table.leaderboard")).toContainText("oracle", { timeout: 60_000 });
  await page.screenshot({ path: "test-results/screens/tournament-leaderboard.png", fullPage: true });
  await page.goto("/#/tournaments");
  await page.screenshot({ path: "test-results/screens/tournaments.png", fullPage: true });
});
