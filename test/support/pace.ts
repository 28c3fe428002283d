/**
 * The machine's pace: how much slower this process gets its work done now than on a machine of its own. Waits
 * scale their budgets by it (see eventually.ts), so a wait chosen on an idle machine holds on one whose two
 * cores carry four test workers and a kind cluster, and an idle machine waits no longer than written.
 * Measured, not guessed: a piece of CPU work is timed by the wall clock and by the CPU time the process was
 * given for it; their ratio is the share of a core the process gets now (1 when alone, 4 when it gets a
 * quarter). Measured at most every few seconds per process, for about 20 ms.
 */
import { availableParallelism, loadavg } from "node:os";
import { performance } from "node:perf_hooks";

/** Never wait less than written, never more than three times it: a wait that needs more is a finding. */
export const PACE_LIMITS = { min: 1, max: 3 } as const;
/** How long one measurement holds before the next wait measures again. */
const MEASURED_FOR_MS = 5_000;
/** How long the work runs by the wall clock: long enough to span the scheduler's time slices. */
const MEASURE_FOR_MS = 20;

/**
 * Wall-clock and CPU time (ms) of CPU work done for about `forMs` of wall-clock time; `result` is the work's
 * result, returned so that the work cannot be optimized away.
 */
export function measureWork(forMs = MEASURE_FOR_MS): { wallMs: number; cpuMs: number; result: number } {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let x = 1;
  while (performance.now() - started < forMs) for (let i = 0; i < 10_000; i++) x = (x * 31 + i) | 0;
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return { wallMs, cpuMs: (cpu.user + cpu.system) / 1_000, result: x };
}

/** The pace from one measurement: wall-clock over CPU time, within {@link PACE_LIMITS}. */
export function paceOf({ wallMs, cpuMs }: { wallMs: number; cpuMs: number }): number {
  if (!(cpuMs > 0) || !(wallMs > 0)) return PACE_LIMITS.max; // no CPU at all in 20 ms: as slow as it gets
  return Math.min(PACE_LIMITS.max, Math.max(PACE_LIMITS.min, wallMs / cpuMs));
}

let measured: { pace: number; at: number } | undefined;

/** This machine's pace now, for this process (measured at most every few seconds). */
export function pace(): number {
  const now = Date.now();
  if (measured && now - measured.at < MEASURED_FOR_MS) return measured.pace;
  measured = { pace: paceOf(measureWork()), at: now };
  return measured.pace;
}

/** A wait of `ms` as written for an idle machine, at this machine's pace now. */
export const budget = (ms: number): number => Math.round(ms * pace());

/**
 * The pace a load of `load` runnable processes (the 1-minute load average) on `cores` cores gives each, within
 * {@link PACE_LIMITS}: 1 while there is a core each, up to three times slower beyond.
 */
export function paceOfLoad(load: number, cores: number): number {
  return Math.min(PACE_LIMITS.max, Math.max(PACE_LIMITS.min, load / Math.max(1, cores)));
}

/**
 * The pace to lay out a scenario by (not only a wait's budget: e.g. timings that processes about to start must keep
 * to): the slower of {@link pace}, one short measurement that a moment's idle core can make 1, and the machine's
 * minute-long load average per core, which a moment does not move (a worker's pace read 1 with the load average
 * 7.5 on two cores, and the processes it started took 1.5 and 5.2 s to their Leases: run 33, 2026-11-30).
 */
export function scenarioPace(): number {
  return Math.max(pace(), paceOfLoad(loadavg()[0] ?? 0, availableParallelism()));
}
