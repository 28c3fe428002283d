/**
 * For a file whose tests carry one thing through (a Cluster made in one test, accessed, slept, snapshotted in the
 * next): once a test fails, each later test of the file fails at once, naming the first failure, instead of waiting
 * out its own timeout on a thing that never got there. CI, 2026-11-29: a CAPD control plane that never initialised
 * cost capi-backend five failed waits, about 40 minutes, while it held the machine locks others waited for.
 *
 * Call it at the top level of the file (or of a describe), before its tests.
 */
import { beforeEach } from "vitest";

export function stopAtFirstFailure(): void {
  let first: string | undefined;
  beforeEach((context) => {
    if (first !== undefined)
      throw new Error(`not run: it goes on from an earlier test of this file, which failed: "${first}"`);
    context.onTestFailed(() => {
      first ??= context.task.name;
    });
  });
}
