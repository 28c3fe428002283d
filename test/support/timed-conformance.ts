/** The conformance kit run as a backend's test runs it: the kit's verdict, and how long its runs took in the log. */
import { type ConformanceOptions, checkBackendConformance } from "../../src/providers/conformance.ts";

/**
 * Runs the conformance kit on `backend` and logs `<name>: <runs> runs in <ms> ms`, so a backend that grows
 * slow shows in the test output before it reaches a timeout.
 */
export async function checkConformanceTimed(
  name: string,
  backend: Parameters<typeof checkBackendConformance>[0],
  options: ConformanceOptions,
): Promise<void> {
  const started = performance.now();
  await checkBackendConformance(backend, options);
  console.log(`${name}: ${options.numRuns ?? 20} runs in ${Math.round(performance.now() - started)} ms`);
}
