/** The context a test hands a backend factory: its state folder and options, the system clock, silence, no Secrets. */
import type { BackendContext } from "../../src/api/backend-contract.ts";
import { systemClock } from "../../src/api/clock.ts";
import { silentLogger } from "../../src/api/logger.ts";

/** A {@link BackendContext} for `stateDirectory` and `options`; `more` gives a log or a Secret reader of the test's own. */
export const aBackendContext = (
  stateDirectory: string,
  options: BackendContext["options"] = {},
  more: Partial<Pick<BackendContext, "log" | "readSecret">> = {},
): BackendContext => ({
  stateDirectory,
  options,
  log: silentLogger,
  clock: systemClock,
  readSecret: async () => undefined,
  ...more,
});
