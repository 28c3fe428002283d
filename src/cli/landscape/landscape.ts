/** `openmcp-engine landscape up|down`: the command line. */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { packageFile } from "../from-checkout.ts";
import { UsageError } from "../usage-error.ts";
import { LandscapeFileError, parseLandscapeFile } from "./landscape-file.ts";
import type { LandscapeSettings } from "./landscape-folder.ts";

export const landscapeUsage = `Usage: openmcp-engine landscape up|down -f <landscape file> [flags]

  up    From nothing to a landscape the engine manages itself: a bootstrap control plane on this machine runs
        the engine, which makes the platform cluster on the landscape's backend; the CRDs and the engine (its
        image) go into the platform cluster, the landscape's objects move there (as 'openmcp-engine move') and
        the bootstrap is removed; the engine in the platform cluster, which manages its own cluster from then on
        (protected from deletion), makes the other purposes' clusters for ClusterRequests. Progress is shown
        step by step; a failed step says what it left where, and running the command again resumes.
  down  Every cluster of the landscape removed (the purposes' clusters, then the platform), then its folder.

The landscape file (YAML):
  apiVersion: engine.openmcp.cloud/v1alpha1
  kind: Landscape
  metadata: {name: local}
  spec:
    backend: kind                  # kind (the engine runs in a Pod of the platform) or gardener (a process here)
    providerConfig: {spec: {}}     # the ProviderConfig the clusters are made from (name: the backend's)
    purposes: [platform, onboarding, workload, mcp]   # the default; {name: onboarding, cluster: platform} shares

Flags:
  -f, --file <path>      the landscape file (required)
  --dir <folder>         the landscape's folder: progress, the platform's admin kubeconfig, the bootstrap, the
                         engine's state folder (default: $XDG_STATE_HOME, else ~/.local/state, then
                         openmcp-engine/landscapes/<name>)
  --image <ref>          the engine's image for the platform cluster (default: built from this checkout by
                         hack/containers/ensure.sh engine-image, once per source change)
  --crds <folder>        the CRDs (default: crds/ of this project)
  --assets <folder>      kube-apiserver and etcd for the bootstrap (default: as for up)
  --timeout <seconds>    how long each wait may take (default: 900)
  -h, --help             show this help`;

/** The backends a landscape can be made on: those that hand their clusters over (and so move with the engine). */
const LANDSCAPE_BACKENDS = ["kind", "gardener"];

/** Runs `landscape up` or `landscape down`. */
export async function landscape(args: string[]): Promise<void> {
  const [action, ...rest] = args;
  if (action !== "up" && action !== "down")
    throw new UsageError(`landscape needs up or down, found ${JSON.stringify(action ?? "")}`, landscapeUsage);
  const settings = settingsFrom(action, rest);
  if (action === "up") {
    const { landscapeUp } = await import("./landscape-up.ts");
    await landscapeUp(settings);
  } else {
    const { landscapeDown } = await import("./landscape-down.ts");
    await landscapeDown(settings);
  }
}

function settingsFrom(action: string, args: string[]): LandscapeSettings {
  const options = {
    file: { type: "string", short: "f" },
    dir: { type: "string" },
    image: { type: "string" },
    crds: { type: "string" },
    assets: { type: "string" },
    timeout: { type: "string" },
  } as const;
  let values: ReturnType<typeof parseArgs<{ options: typeof options }>>["values"];
  try {
    values = parseArgs({ args, options, strict: true }).values;
  } catch (error) {
    throw new UsageError((error as Error).message, landscapeUsage);
  }
  if (!values.file) throw new UsageError(`landscape ${action} needs -f <landscape file>`, landscapeUsage);
  const seconds = Number(values.timeout ?? "900");
  if (!(seconds > 0))
    throw new UsageError(
      `--timeout "${values.timeout}" must be a positive number of seconds`,
      landscapeUsage,
    );
  let text: string;
  try {
    text = readFileSync(values.file, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read the landscape file: ${(error as Error).message}`, landscapeUsage);
  }
  const landscape = parseLandscapeFile(text, values.file);
  if (!LANDSCAPE_BACKENDS.includes(landscape.backend))
    throw new LandscapeFileError(values.file, [
      `spec.backend: a landscape runs on ${LANDSCAPE_BACKENDS.join(" or ")} (their clusters move with the engine), not ${JSON.stringify(landscape.backend)}`,
    ]);
  const stateHome = process.env.XDG_STATE_HOME ?? join(homedir(), ".local", "state");
  const directory = resolve(values.dir ?? join(stateHome, "openmcp-engine", "landscapes", landscape.name));
  const again = ["openmcp-engine landscape", "-f", values.file, ...(values.dir ? ["--dir", values.dir] : [])];
  return {
    landscape,
    directory,
    fileFolder: dirname(resolve(values.file)),
    crds: resolve(values.crds ?? packageFile("crds")),
    ...(values.assets ? { assets: values.assets } : {}),
    ...(values.image ? { image: values.image } : {}),
    timeoutMs: seconds * 1_000,
    say: (line) => console.log(line),
    resumeCommand: [again[0], "up", ...again.slice(1)].join(" "),
    downCommand: [again[0], "down", ...again.slice(1)].join(" "),
  };
}
