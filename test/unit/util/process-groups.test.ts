/** Process liveness by pid, on real processes: alive, ours (by marker), someone else's (EPERM), zombie, gone. */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { isProcessAlive, stopProcessGroups } from "../../../src/util/process-groups.ts";
import { eventually } from "../../support/eventually.ts";

const started: ChildProcess[] = [];

/** A child running `script` in its own process group, the way the control plane starts its processes. */
function startShell(script: string): ChildProcess {
  const child = spawn("/bin/sh", ["-c", script], { detached: true, stdio: ["ignore", "pipe", "ignore"] });
  started.push(child);
  return child;
}

afterEach(() => {
  for (const child of started.splice(0)) {
    if (child.pid && child.exitCode === null && child.signalCode === null)
      process.kill(-child.pid, "SIGKILL");
  }
});

const modulePath = fileURLToPath(new URL("../../../src/util/process-groups.ts", import.meta.url));

/**
 * Asks `isProcessAlive(pid, marker)` from a process that may not signal `pid`: as user nobody when the
 * tests run as root (then our own pid is someone else's to it), else of pid 1, which is root's.
 */
async function askAsAnotherUser(marker?: string): Promise<{ pid: number; alive: boolean }> {
  const root = process.getuid?.() === 0;
  const pid = root ? process.pid : 1;
  const script = `import(${JSON.stringify(modulePath)}).then((m) => console.log(m.isProcessAlive(${pid}, ${JSON.stringify(marker)})))`;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["-e", script],
    root ? { uid: 65534, gid: 65534 } : {},
  );
  return { pid, alive: stdout.trim() === "true" };
}

describe("isProcessAlive", () => {
  it("sees a running process, and with a marker only if its command line carries it", async () => {
    const child = startShell("sleep 30; exit 0 # marker-7f3a");
    await once(child, "spawn");
    const pid = child.pid as number;
    expect(isProcessAlive(pid)).toBe(true);
    expect(isProcessAlive(pid, "marker-7f3a")).toBe(true);
    expect(isProcessAlive(pid, "another-marker")).toBe(false);
  });

  it("counts a process that ended as gone, and refuses pids that name no single process", async () => {
    const child = startShell("exit 0");
    const pid = child.pid as number;
    await once(child, "exit");
    expect(isProcessAlive(pid)).toBe(false);
    for (const invalid of [0, -1, 1.5, Number.NaN]) expect(isProcessAlive(invalid)).toBe(false);
  });

  it("counts a zombie (ended, not yet reaped) as gone", async () => {
    // The shell starts a child, then becomes `sleep`, which never reaps it. The child exits only once its parent is
    // `sleep`: had it exited first, the shell could have reaped it before its exec (seen on a loaded machine).
    const child = startShell(
      `sh -c 'until [ "$(cat /proc/$PPID/comm)" = sleep ]; do sleep 0.01; done' & echo $!; exec sleep 30`,
    );
    const [line] = (await once(child.stdout as NodeJS.ReadableStream, "data")) as [Buffer];
    const zombie = Number(line.toString().trim());
    await eventually(() => expect(readFileSync(`/proc/${zombie}/stat`, "utf8")).toMatch(/\) Z /), {
      what: `pid ${zombie} a zombie`,
    });
    expect(isProcessAlive(zombie)).toBe(false);
    expect(isProcessAlive(child.pid as number)).toBe(true); // its parent lives on
  });

  it("counts someone else's process (EPERM) as alive, and as ours only by its marker", async () => {
    const root = process.getuid?.() === 0;
    expect(await askAsAnotherUser()).toEqual({ pid: root ? process.pid : 1, alive: true });
    expect((await askAsAnotherUser("no-such-marker")).alive).toBe(false);
  });
});

describe("stopProcessGroups", () => {
  it("stops a group whose leader ignores SIGTERM with SIGKILL after the grace period", async () => {
    const child = startShell("trap '' TERM; echo ready; while :; do sleep 1; done # marker-stubborn");
    await once(child.stdout as NodeJS.ReadableStream, "data");
    const pid = child.pid as number;
    await stopProcessGroups([{ pid, marker: "marker-stubborn" }], 200);
    expect(isProcessAlive(pid)).toBe(false);
  });

  it("kills what is left of the group after its leader went on SIGTERM", async () => {
    // The leader exits on SIGTERM; its child ignores SIGTERM and would outlive it.
    const child = startShell("(trap '' TERM; while :; do sleep 1; done) & echo $!; wait # marker-left");
    const [line] = (await once(child.stdout as NodeJS.ReadableStream, "data")) as [Buffer];
    const member = Number(line.toString().trim());
    await stopProcessGroups([{ pid: child.pid as number, marker: "marker-left" }], 2_000);
    await eventually(() => expect(isProcessAlive(member)).toBe(false));
  });

  it("leaves alone a live process whose command line lacks the marker (a reused pid)", async () => {
    const child = startShell("exec sleep 30");
    await once(child, "spawn");
    await stopProcessGroups([{ pid: child.pid as number, marker: "not-this-one" }], 200);
    expect(isProcessAlive(child.pid as number)).toBe(true);
  });
});
