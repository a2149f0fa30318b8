// A match that a model's endpoint failed (seeded by seeded_api.py): the match page, the match
// lists and its tournament name the model at fault loudly, as `arena tournament` does.
import { expect, test } from "@playwright/test";

const MODEL = "flaky-endpoint";

test("a model's endpoint at fault is named on its match, in the lists and on its tournament", async ({ page }) => {
  await page.goto(`/#/matches?model=${MODEL}`);
  const row = page.locator("table.matches tbody tr");
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("failed");
  await expect(row).toContainText(`model ${MODEL}'s endpoint at fault`);
  await row.getByRole("link").first().click();

  const fault = page.getByTestId("match-fault");
  await expect(fault).toContainText(`At fault: model ${MODEL}'s endpoint`);
  await expect(fault).toContainText("refused the configuration or stayed down");
  await expect(fault).toContainText("left out of the ratings");
  await expect(fault.getByRole("link", { name: MODEL })).toHaveAttribute("href", `#/models/${MODEL}`);
  await expect(page.getByTestId("match-result")).toContainText("HTTP 401");
  await page.screenshot({ path: "test-results/screens/match-fault.png", fullPage: true });

  await page.getByRole("link", { name: /^#\d+$/ }).click();
  await expect(page).toHaveURL(/#\/tournaments\/\d+$/);
  const warning = page.getByTestId("models-at-fault");
  await expect(warning).toContainText("1 match(es) failed and are left out of the standings");
  await expect(warning).toContainText(`model ${MODEL}'s endpoint is at fault in 1 match(es); last:`);
  await expect(warning).toContainText("HTTP 401");
  await expect(page.locator("table.matches")).toContainText(`model ${MODEL}'s endpoint at fault`);
  await page.screenshot({ path: "test-results/screens/tournament-fault.png", fullPage: true });

  await page.goto("/#/tournaments/1"); // the other seeded tournament: every match finished
  await expect(page.getByTestId("tournament-status")).toHaveText("done");
  await expect(page.getByTestId("models-at-fault")).toHaveCount(0);
});
