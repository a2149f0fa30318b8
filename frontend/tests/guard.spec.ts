// A task whose runs can carry no tripwire that must fail says so where the task is shown.
import { expect, test } from "@playwright/test";

test("an unguarded task says so in its details", async ({ page }) => {
  await page.goto("/#/tasks");
  const table = page.getByRole("table", { name: "Tasks" });
  await table.locator("tbody tr", { hasText: "demo__cpp-ringbuffer-wrap" }).getByRole("button", { name: /demo__cpp-ringbuffer-wrap/ }).first().click();
  const detail = table.locator("tr.expanded");
  await expect(detail.locator("p.unguarded")).toContainText("Unguarded: no tripwire test that must fail");
  await page.screenshot({ path: "test-results/screens/task-unguarded.png", fullPage: true });
});
