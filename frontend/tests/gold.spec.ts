// Gold answers are not public: a task's gold patch and tests are "available to the admin" until
// the admin token is given in this tab; a finished match's page shows its gold fix.
import { expect, test, type Page } from "@playwright/test";

async function openTask(page: Page) {
  await page.goto("/#/tasks");
  const table = page.getByRole("table", { name: "Tasks" });
  await table.locator("tbody tr", { hasText: "python__legs-deviation" }).getByRole("button", { name: /python__legs-deviation/ }).click();
  const detail = table.locator("tr.expanded");
  await expect(detail).toContainText("Chosen leg");
  return detail;
}

test("a task's gold patch and tests are shown to the admin only", async ({ page }) => {
  const anonymous = await openTask(page);
  await expect(anonymous.getByTestId("gold-withheld")).toContainText("Gold patch and tests: available to the admin.");
  await expect(anonymous.locator("details.gold")).toHaveCount(0);
  await page.screenshot({ path: "test-results/screens/task-gold-withheld.png", fullPage: true });

  await page.goto("/#/admin");
  await page.getByRole("textbox", { name: /Admin token/ }).fill("web-admin-token");
  await page.getByRole("button", { name: "Use it" }).click();
  await expect(page.getByRole("table", { name: "Models" })).toContainText("oracle");
  const admin = await openTask(page);
  await expect(admin.getByTestId("gold-withheld")).toHaveCount(0);
  await admin.getByText("Gold patch and tests (shown to the admin)").click();
  await expect(admin.locator("details.gold")).toContainText("legs.py");
  await page.screenshot({ path: "test-results/screens/task-gold-admin.png", fullPage: true });
});

test("a finished match shows the gold fix it was judged against", async ({ page }) => {
  await page.goto("/#/matches/1");
  const gold = page.getByRole("region", { name: "Gold fix" });
  await expect(gold).toBeVisible();
  await expect(page.getByTestId("match-withheld")).toHaveCount(0);
  await gold.locator("summary").click();
  await expect(gold).toContainText("Gold patch");
  await expect(gold).toContainText("Gold tests");
  await expect(gold.getByTestId("gold-withheld")).toHaveCount(0);
});
