/**
 * The engine as a process of this machine against the platform cluster, for landscapes whose clusters have no
 * nodes to run a Pod on (a Gardener Shoot of the simulated gardenlet, a local control plane): `openmcp-engine run`,
 * started detached so that it outlives `landscape up`, its pid and log in the landscape's folder; `down` stops it,
 * and a resumed `up` starts it again if it is not running.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startDetached } from "../../util/detached-process.ts";
import { freePorts } from "../../util/free-ports.ts";
import { pollUntil } from "../../util/poll-until.ts";
import { isProcessAlive, stopProcessGroups } from "../../util/process-groups.ts";
import type { LandscapeFolder } from "./landscape-folder.ts";
import { schedulerConfigYaml } from "./landscape-plan.ts";

/** The CLI's entry beside this folder: main.ts in a checkout, main.js in the package (compiled). */
const MAIN = fileURLToPath(
  new URL(`../main.${import.meta.url.endsWith(".ts") ? "ts" : "js"}`, import.meta.url),
);

/** The engine process's pid file, log and scheduler configuration in the landscape's folder. */
const files = (folder: LandscapeFolder) => ({
  pid: join(folder.settings.directory, "engine.pid"),
  log: join(folder.settings.directory, "engine.log"),
  scheduler: join(folder.settings.directory, "scheduler.yaml"),
});

/** The recorded engine process, if it runs (a pid reused by another program does not count: its command names the folder). */
async function runningPid(folder: LandscapeFolder): Promise<number | undefined> {
  const pid = Number(await readFile(files(folder).pid, "utf8").catch(() => ""));
  return pid > 0 && isProcessAlive(pid, folder.stateFolder) ? pid : undefined;
}

/** Makes sure the engine runs against the platform cluster; resolves once it answers ready. */
export async function ensureEngineProcess(folder: LandscapeFolder): Promise<void> {
  if (await runningPid(folder)) return;
  const { landscape, settings } = folder;
  const paths = files(folder);
  await writeFile(paths.scheduler, schedulerConfigYaml(landscape));
  const [port] = (await freePorts(1)) as [number];
  const child = startDetached({
    command: process.execPath,
    args: [
      MAIN,
      "run",
      "--kubeconfig",
      folder.platformKubeconfig,
      "--provider-name",
      landscape.providerName,
      "--environment",
      landscape.environment,
      "--state-dir",
      folder.stateFolder,
      "--scheduler-config",
      paths.scheduler,
      `--health-probe-bind-address=127.0.0.1:${port}`,
      "--metrics-bind-address=0",
      ...Object.entries(landscape.backendOptions).map(([key, value]) => `--backend-option=${key}=${value}`),
    ],
    stdout: paths.log,
  });
  await writeFile(paths.pid, `${child.pid}\n`);
  settings.say(`  engine: process ${child.pid} against the platform cluster, log ${paths.log}`);
  await pollUntil(
    `the engine process ${child.pid} ready (its log: ${paths.log})`,
    async () => {
      if (child.exitCode !== null) throw new Error(`it exited with ${child.exitCode}`);
      const answer = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
      return answer?.ok ? { done: true, value: true } : { done: false, why: "not ready yet" };
    },
    { timeoutMs: settings.timeoutMs, intervalMs: 500 },
  );
}

/** Stops the engine process (SIGTERM, then SIGKILL after 10 s); none running is fine. */
export async function stopEngineProcess(folder: LandscapeFolder): Promise<void> {
  const pid = await runningPid(folder);
  if (pid) await stopProcessGroups([{ pid, marker: folder.stateFolder }], 10_000);
}
