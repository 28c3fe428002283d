/**
 * The heavy project's global setup: the kube binaries now (the other projects need them too), then the container
 * toolchain, Cluster API, Gardener, Chromium, Jaeger and MetalLB in a child process, so the unit and integration
 * projects run while a fresh machine builds them (seconds warm). Each heavy file waits for the stages it needs
 * (heavy-assets-ready.ts) before it starts, so on a fresh machine the builds bound the run.
 *
 * The child runs in a session of its own. Linux shares the cores between sessions first (autogroups), and every
 * control plane a test starts is a session of its own (detached), so in the vitest session, at nice 10 below its
 * workers, the builds got what was left of the one share that session had among a dozen: on 2026-12-01 a fresh
 * machine took 50 minutes to build them beside the tests. In a session of its own the build has a share like each
 * control plane's.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findKubeAssets } from "../../src/controlplane/kube-assets.ts";
import { HEAVY_ASSETS_ENV } from "./heavy-assets.ts";

export default function setup(): () => void {
  findKubeAssets(); // before the child, which builds on them: one build of them, never two at once
  const folder = mkdtempSync(join(tmpdir(), "heavy-assets-"));
  const answers = join(folder, "answer");
  const child: ChildProcess = spawn(
    process.execPath,
    [join(import.meta.dirname, "heavy-assets.ts"), answers],
    {
      stdio: ["ignore", "inherit", "inherit"],
      detached: true,
    },
  );
  process.env[HEAVY_ASSETS_ENV] = answers;
  return () => {
    // A run cut short must not leave a build behind it: the whole group, the builds the child started with it (the
    // build scripts clean up after themselves). Its own session, it no longer gets the terminal's Ctrl-C.
    if (child.exitCode === null && child.signalCode === null && child.pid) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // gone meanwhile
      }
    }
    rmSync(folder, { recursive: true, force: true });
  };
}
