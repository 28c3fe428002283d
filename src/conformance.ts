/**
 * `openmcp-engine/conformance`: the backend contract as an executable test, for a backend's own test runner
 * (vitest, `node --test`, any runner that fails on a rejected promise). It needs nothing of this repository.
 */
export {
  ConformanceError,
  type ConformanceOptions,
  type ConformanceRun,
  checkBackendConformance,
} from "./providers/conformance.ts";
export { checkPoolConformance, type PoolConformanceOptions } from "./providers/conformance-pools.ts";
export {
  checkSnapshotConformance,
  type SnapshotConformanceOptions,
} from "./providers/conformance-snapshots.ts";
