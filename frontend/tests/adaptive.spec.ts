// An adaptive tournament (seeded by seeded_api.py: stopped once its budget of one match was
// spent) shows its goal, its criterion against the target, what it spent and why it stopped.
import { expect, test } from "@playwright/test";

test("an adaptive tournament shows its goal, criterion, spending and stop reason", async ({ page }) => {
  await page.goto("/#/tournaments");
  const row = page.getByRole("table", { name: "Tournaments" }).locator("tr", { hasText: "adaptive" });
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("done (budget)");
  await row.getByRole("link").first().click();
  await expect(page).toHaveURL(/#\/tournaments\/\d+$/);
  const shown = page.getByTestId("adaptive");
  await expect(shown).toContainText("adaptive (the pairing engine chooses each next match, 2 at a time)");
  await expect(shown).toContainText("adjacent intervals apart, or both at most 100 points wide");
  await expect(page.getByTestId("adaptive-criterion")).toContainText(/widest open interval \d+ points \(target 100\)/);
  await expect(page.getByTestId("adaptive-spent")).toContainText("1 of 1 matches");
  await expect(page.getByTestId("adaptive-stop")).toHaveText("stopped: its budget is spent");
  await expect(page.locator("table.matches tbody tr")).toHaveCount(1);
  const spending = page.getByRole("table", { name: "Spending per model" }).locator("tbody tr");
  await expect(spending).toHaveCount(2); // the two models of its one match
  await expect(spending.first()).toContainText("12,400"); // two answers of 5,400 + 800 tokens
  await page.screenshot({ path: "test-results/screens/tournament-adaptive.png", fullPage: true });
});
