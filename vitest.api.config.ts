/**
 * The API-server loop for one or a few files: `npx vitest run --config vitest.api.config.ts test/integration/<file>`.
 * Only the kube binaries are set up, for any file named (a heavy file then finds or builds its own assets as
 * it goes). The three projects are in vitest.config.ts.
 */
import { defineConfig } from "vitest/config";
import { integration, RUNNER } from "./vitest.config.ts";

export default defineConfig({
  test: {
    ...RUNNER,
    ...integration.test,
    include: ["test/**/*.test.ts"],
    exclude: [],
    reporters: ["default"],
  },
});
