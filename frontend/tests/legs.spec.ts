// The Tasks page shows the job legs each task's pipeline was chosen from (chosen, tried with its
// outcome, candidate, rejected with category and why, in rank order) and the environment's
// deviation from what the job asks, on a laptop and a phone (tasks seeded by seeded_api.py).
import { expect, test, type Page } from "@playwright/test";

const DEVIATION = "job asks Python 3.12; ran on 3.13";

async function openLegs(page: Page) {
  await page.goto("/#/tasks");
  const table = page.getByRole("table", { name: "Tasks" });
  const row = table.locator("tbody tr", { hasText: "python__legs-deviation" });
  const badge = row.getByRole("list", { name: "Environment deviation" });
  await expect(badge).toBeVisible(); // in the row itself: no need to open it
  await expect(badge.locator(".deviation-badge")).toHaveText("deviation");
  await expect(badge).toContainText(DEVIATION);
  await row.getByRole("button", { name: /python__legs-deviation/ }).click();
  const detail = table.locator("tr.expanded");
  await expect(detail).toContainText("Chosen leg");
  const legs = detail.getByRole("list", { name: "Legs considered" });
  await expect(legs).toBeHidden(); // expandable: closed until asked
  await detail.getByText(/^Legs considered \(5: 1 chosen, 1 tried, 1 candidate, 2 rejected\)$/).click();
  await expect(legs).toBeVisible();
  return { table, row, detail, legs };
}

test("a task's legs considered and its environment deviation are shown, never silent", async ({ page }) => {
  await page.setViewportSize({ width: 1400, height: 900 });
  const { table, detail, legs } = await openLegs(page);

  const items = legs.locator("li");
  await expect(items).toHaveCount(5);
  const statuses = await items.evaluateAll((els) => els.map((e) => e.getAttribute("data-status")));
  expect(statuses).toEqual(["tried", "chosen", "candidate", "rejected", "rejected"]); // rank order
  await expect(items.nth(0)).toContainText("tests (3.13, ubuntu-latest)");
  await expect(items.nth(0)).toContainText("rank 1");
  await expect(items.nth(0)).toContainText("outcome: no test fails without the gold patch and passes with it");
  await expect(items.nth(1)).toContainText("tests (3.12, ubuntu-latest)");
  await expect(items.nth(3)).toContainText("Windows or macOS only: runs on windows-latest");
  await expect(items.nth(4)).toContainText("no test step: runs no tests (sphinx-build)");
  await expect(items.nth(4)).not.toContainText("rank");

  await expect(detail).toContainText("tests (3.12, ubuntu-latest) @ .github/workflows/tests.yml");
  await expect(detail).toContainText("3.12"); // the toolchain asked for
  await expect(detail).toContainText("actions/cache@v4, codecov/codecov-action@v4");
  await expect(detail.getByRole("list", { name: "Environment deviation" })).toContainText(DEVIATION);

  // built as the job asks: no badge; invalid on every leg tried, with the reason in the row
  const exact = table.locator("tbody tr", { hasText: "rust__legs-tried" });
  await expect(exact.locator(".deviation-badge")).toHaveCount(0);
  await expect(exact).toContainText("invalid (no test fails without the gold patch");
  await expect(exact).toContainText("2 legs tried, none valid");
  await page.screenshot({ path: "test-results/screens/tasks-legs.png", fullPage: true });
  await table.screenshot({ path: "test-results/screens/tasks-legs-table.png" });

  await exact.getByRole("button", { name: /rust__legs-tried/ }).click();
  const rust = table.locator("tr.expanded").filter({ hasText: "test (stable) @" });
  await expect(rust).toContainText("as the job asks (no deviation recorded)");
  // filed under Python by the dataset, its gold patch and tests are Rust: it runs as Rust
  await expect(rust).toContainText("filed as python, runs as rust");
  await rust.screenshot({ path: "test-results/screens/tasks-filed-language.png" });
  await rust.getByText(/^Legs considered \(2:/).click();
  await expect(rust.locator("li[data-status='chosen']")).toContainText("outcome: no test fails");
});

const inView = async (page: Page, box: { x: number; width: number } | null) => {
  const width = page.viewportSize()?.width ?? 0;
  expect(box).not.toBeNull();
  expect(box?.x ?? -1).toBeGreaterThanOrEqual(0);
  expect((box?.x ?? width) + (box?.width ?? 0)).toBeLessThanOrEqual(width);
};

test("phone width: the deviation badge and the legs list fit the screen", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto("/#/tasks");
  const row = page.getByRole("table", { name: "Tasks" }).locator("tbody tr", { hasText: "python__legs-deviation" });
  await inView(page, await row.locator(".deviation-badge").boundingBox());
  const { legs } = await openLegs(page);
  await inView(page, await legs.boundingBox()); // the opened task is not as wide as the table
  await inView(page, await legs.locator("li").nth(3).boundingBox());
  await page.screenshot({ path: "test-results/screens/tasks-legs-phone.png", fullPage: true });
  await legs.screenshot({ path: "test-results/screens/tasks-legs-phone-list.png" });
});
