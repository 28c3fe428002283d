/**
 * The API-server loop: one or a few integration files that need real kube-apiservers and etcd but no
 * Docker, Cluster API or Gardener assets (`npx vitest run --config vitest.api.config.ts test/integration/<file>`).
 * The full suite is vitest.config.ts (`npm test`).
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup-kube.ts"],
    reporters: ["default"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
