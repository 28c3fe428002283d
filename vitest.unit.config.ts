/**
 * The fast inner loop: unit and property tests only, pure code, so no global setup (no kube binaries, no
 * images, no Docker). `npm run test:unit`; `npm test` runs everything with vitest.config.ts.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/unit/**/*.test.ts", "test/property/**/*.test.ts"],
    reporters: ["default"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 60_000,
  },
});
