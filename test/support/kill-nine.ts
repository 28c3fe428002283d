/**
 * The kill -9 scenario, one test for every kind: `openmcp-engine run` killed with SIGKILL mid-way through
 * its work, a second started with the same flags and state folder; the work finishes, nothing the first
 * ordered is ordered twice, and the second stops cleanly on SIGTERM. Each kind says what to create, when
 * the first is mid-way, and what "finished, once" means for it.
 */
import { expect } from "vitest";
import { startEngineCli } from "./processes.ts";

/** An engine started as a child process, its output collected. */
export type RunningEngineCli = ReturnType<typeof startEngineCli>;

/** One kind's part of the scenario. */
export interface KillNineCase {
  /** The kind, for the test's name. */
  readonly kind: string;
  /** `openmcp-engine` arguments of both engines (`run …`, the same state folder). */
  readonly args: readonly string[];
  /** Creates the objects the first engine works on. */
  create(): Promise<void>;
  /** Returns once the first engine is mid-way: the moment to kill it. */
  midway(first: RunningEngineCli): Promise<void>;
  /** After the restart: waits until the work is finished and checks that nothing was done twice. */
  finished(first: RunningEngineCli, second: RunningEngineCli): Promise<void>;
}

/** Runs the scenario for one kind. */
export async function killNineMidway(scenario: KillNineCase): Promise<void> {
  const first = startEngineCli(scenario.args);
  await scenario.create();
  await scenario.midway(first);
  first.child.kill("SIGKILL");
  await exitOf(first);

  const second = startEngineCli(scenario.args);
  try {
    await scenario.finished(first, second);
    expect(first.output() + second.output()).not.toMatch(
      /BEGIN (CERTIFICATE|PRIVATE KEY)|client-key-data|token/i,
    );
    second.child.kill("SIGTERM");
    expect(await exitOf(second), second.output()).toBe(0);
    expect(second.output()).toContain('"msg":"engine stopped"');
  } finally {
    if (second.child.exitCode === null && second.child.signalCode === null) second.child.kill("SIGKILL");
  }
}

/** The exit code of an engine (null when a signal ended it). */
const exitOf = (engine: RunningEngineCli): Promise<number | null> =>
  engine.child.exitCode !== null || engine.child.signalCode !== null
    ? Promise.resolve(engine.child.exitCode)
    : new Promise((resolve) => engine.child.once("exit", (code) => resolve(code)));
