/** Prints one closing line `N passed, N failed, N skipped` that CI reads, whatever the runner's own format. */
import type { SerializedError } from "vitest";
import type { Reporter, TestModule } from "vitest/node";

export default class SummaryReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<SerializedError>,
  ): void {
    const counts = { passed: 0, failed: unhandledErrors.length, skipped: 0 };
    for (const module of testModules) {
      let failedInModule = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") counts.passed++;
        else if (state === "failed") failedInModule++;
        else counts.skipped++;
      }
      // A failing hook or import fails the file without failing a test: count it, never hide it.
      counts.failed += failedInModule > 0 ? failedInModule : module.state() === "failed" ? 1 : 0;
    }
    console.log(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  }
}
