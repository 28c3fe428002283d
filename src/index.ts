/**
 * `openmcp-engine`: the engine for a program that embeds it — `run` starts it with options, as the `run`
 * command does with flags; `plan` says what it would do about proposed changes, doing nothing — and the backend
 * contract (also alone as `openmcp-engine/backend`).
 */
export * from "./backend.ts";
export type { Engine } from "./runtime/engine.ts";
export type { LeaderElectionTiming } from "./runtime/leadership/leader-election.ts";
export type { MachineObserver } from "./runtime/machine-observer.ts";
export type { EngineMetrics } from "./runtime/metrics.ts";
export {
  type Manifest,
  type Plan,
  type PlanChange,
  PlanChangeError,
  type PlannedCommand,
  type PlannedObject,
  type PlannedOutcome,
  type PlannedStep,
  type PlannedWrite,
  type PlanOptions,
  type PlanSummary,
  plan,
} from "./runtime/plan/plan.ts";
export { type RunningEngine, startEngine as run } from "./runtime/start/engine-from-settings.ts";
export type { EngineSettings, RunOptions } from "./runtime/start/engine-settings.ts";
export { execWithEngineMemorySettings } from "./runtime/start/v8-flags.ts";
