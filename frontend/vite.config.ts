/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The API serves the build at / and JSON at /api; `npm run dev` proxies /api to a local server.
export default defineConfig({
  plugins: [react()],
  base: "./",
  server: { proxy: { "/api": process.env.ARENA_API_URL ?? "http://127.0.0.1:8000" } },
  build: { chunkSizeWarningLimit: 1500 },
  test: { environment: "jsdom", include: ["src/**/*.test.{ts,tsx}"] },
});
