// Browser tests drive Debian's chromium against the real API (frontend/tests/seeded_api.py),
// or against ARENA_WEB_URL when one is already running.
import { defineConfig } from "@playwright/test";

const port = Number(process.env.ARENA_WEB_PORT ?? 8765);
const external = process.env.ARENA_WEB_URL;
const python = process.env.ARENA_PYTHON ?? ".venv/bin/python"; // run from the repository root

export default defineConfig({
  testDir: "tests",
  outputDir: "test-results/artifacts",
  timeout: 60_000,
  workers: 1,
  reporter: [["list"]],
  use: {
    baseURL: external ?? `http://127.0.0.1:${port}`,
    launchOptions: { executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: ["--no-sandbox"] },
    acceptDownloads: true,
  },
  webServer: external
    ? undefined
    : {
        // the repo's top is the script's import root (it imports tests/servers.py)
        command: `PYTHONPATH=. ${python} frontend/tests/seeded_api.py ${port}`,
        cwd: "..",
        url: `http://127.0.0.1:${port}/api/health`,
        timeout: 180_000,
        reuseExistingServer: false,
        stdout: "pipe",
        // without it the server's group is killed outright, and its workers (sessions of
        // their own), PostgreSQL and sandboxes outlive the run; on SIGTERM it stops them all
        gracefulShutdown: { signal: "SIGTERM", timeout: 30_000 },
      },
});
