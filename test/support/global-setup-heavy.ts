/**
 * The heavy project's global setup: the kube binaries now (the other projects need them too), then the container
 * toolchain, Cluster API, Gardener, Chromium, Jaeger and MetalLB in a child process at low priority, so the unit and
 * integration projects run while a fresh machine builds them (~40 minutes cold, seconds warm). Each heavy file
 * waits for the stages it needs (heavy-assets-ready.ts) before it starts.
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
    "nice",
    ["-n", "10", process.execPath, join(import.meta.dirname, "heavy-assets.ts"), answers],
    { stdio: ["ignore", "inherit", "inherit"] },
  );
  process.env[HEAVY_ASSETS_ENV] = answers;
  return () => {
    // A run cut short must not leave a build behind it (the build scripts clean up after themselves).
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    rmSync(folder, { recursive: true, force: true });
  };
}
