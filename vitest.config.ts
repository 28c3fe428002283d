/** Test runner configuration: unit, property and integration tests under test/. */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    reporters: ["default", "./test/support/summary-reporter.ts"],
    pool: "forks",
    // Integration tests each start a real control plane (~0.5 GiB); two at a time suit a 2-core machine.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
