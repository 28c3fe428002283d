/**
 * A stand-in for the `kind` CLI, run as a process by the kind backend's tests (through the shim that
 * `fake-kind.ts` writes). It understands the commands the backend uses, records every call as one JSON
 * line in `calls.jsonl`, and keeps its clusters as files in `clusters/`, all under `$FAKE_KIND_DIR`.
 * `config.json` there sets a create delay and an injected create failure.
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { writeFileAtomicallySync } from "../../src/util/atomic-file.ts";
import { fakeKindPort } from "./fake-kind.ts";

/** What a fake kind cluster is. */
export interface FakeKindCluster {
  readonly name: string;
  readonly image: string;
  readonly port: number;
  /** False while its create runs. */
  readonly ready: boolean;
}

/** Behaviour of the fake, read from `config.json` at every call. */
export interface FakeKindConfig {
  /** How long `create cluster` takes (default 0). */
  readonly createDelayMs?: number;
  /**
   * While true, a `create cluster` past its delay does not finish (looked at every 50 ms): a test that needs a
   * create still running while it does slow things (a backend started anew) holds it, on a loaded machine too.
   */
  readonly createsHeld?: boolean;
  /** If set, `create cluster` fails after its delay with this message (and removes what it made, like kind). */
  readonly createFailure?: string;
  /** Lines a failing create prints after its ERROR line (kind's "Command Output:" of what failed). */
  readonly createFailureOutput?: readonly string[];
  /**
   * How many `delete cluster` calls fail first, leaving the cluster, with Docker's error for a node that did not
   * exit within its wait (default 0).
   */
  readonly deleteFailures?: number;
}

const directory = process.env.FAKE_KIND_DIR;
if (!directory) {
  process.stderr.write("fake kind: FAKE_KIND_DIR is not set\n");
  process.exit(2);
}
const clustersDirectory = join(directory, "clusters");
mkdirSync(clustersDirectory, { recursive: true });

const args = process.argv.slice(2);
appendFileSync(join(directory, "calls.jsonl"), `${JSON.stringify(args)}\n`);

function readConfig(): FakeKindConfig {
  try {
    return JSON.parse(readFileSync(join(directory as string, "config.json"), "utf8")) as FakeKindConfig;
  } catch {
    return {};
  }
}

function fail(message: string, code = 1): never {
  process.stderr.write(`ERROR: ${message}\n`);
  process.exit(code);
}

/** Splits `--flag value` / `--flag=value` pairs; unknown flags fail like kind's. */
function flags(
  rest: readonly string[],
  known: readonly string[],
  switches: readonly string[] = [],
): Record<string, string> {
  const result: Record<string, string> = {};
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    if (!arg.startsWith("--")) fail(`unexpected argument "${arg}"`);
    const [flag, inline] = arg.slice(2).split("=", 2) as [string, string | undefined];
    if (switches.includes(flag)) {
      result[flag] = inline ?? "true";
      continue;
    }
    if (!known.includes(flag)) fail(`unknown flag: --${flag}`);
    const value = inline ?? rest[++i];
    if (value === undefined) fail(`flag needs an argument: --${flag}`);
    result[flag] = value;
  }
  return result;
}

const clusterFile = (name: string) => join(clustersDirectory, `${name}.json`);

function readCluster(name: string): FakeKindCluster | undefined {
  try {
    return JSON.parse(readFileSync(clusterFile(name), "utf8")) as FakeKindCluster;
  } catch {
    return undefined;
  }
}

function writeCluster(cluster: FakeKindCluster): void {
  const file = clusterFile(cluster.name);
  writeFileAtomicallySync(file, JSON.stringify(cluster));
}

const base64 = (text: string) => Buffer.from(text).toString("base64");

/** The kubeconfig kind prints: the host's published port, or with `internal` the node's name on the Docker network. */
function kubeconfig(cluster: FakeKindCluster, internal = false): string {
  const context = `kind-${cluster.name}`;
  const pem = (what: string) => `-----BEGIN ${what}-----\nFAKE-${cluster.name}\n-----END ${what}-----\n`;
  return [
    "apiVersion: v1",
    "clusters:",
    "- cluster:",
    `    certificate-authority-data: ${base64(pem("CERTIFICATE"))}`,
    internal
      ? `    server: https://${cluster.name}-control-plane:6443`
      : `    server: https://127.0.0.1:${cluster.port}`,
    `  name: ${context}`,
    "contexts:",
    "- context:",
    `    cluster: ${context}`,
    `    user: ${context}`,
    `  name: ${context}`,
    `current-context: ${context}`,
    "kind: Config",
    "preferences: {}",
    "users:",
    `- name: ${context}`,
    "  user:",
    `    client-certificate-data: ${base64(pem("CERTIFICATE"))}`,
    `    client-key-data: ${base64(pem("RSA PRIVATE KEY"))}`,
    "",
  ].join("\n");
}

async function create(rest: readonly string[]): Promise<void> {
  const options = flags(rest, ["name", "image", "config", "kubeconfig", "wait"]);
  const name = options.name ?? "kind";
  const image = options.image ?? "kindest/node:v1.34.0";
  if (existsSync(clusterFile(name)))
    fail(`failed to create cluster: node(s) already exist for a cluster with the name "${name}"`);
  const config = readConfig();
  process.stderr.write(`Creating cluster "${name}" ...\n ✓ Ensuring node image (${image}) 🖼\n`);
  writeCluster({ name, image, port: fakeKindPort(name), ready: false });
  await sleep(config.createDelayMs ?? 0);
  while (readConfig().createsHeld) await sleep(50);
  if (config.createFailure !== undefined) {
    rmSync(clusterFile(name), { force: true }); // kind removes the nodes of a failed create
    process.stderr.write(
      ` ✗ Starting control-plane 🕹️\nERROR: failed to create cluster: ${config.createFailure}\n`,
    );
    for (const line of config.createFailureOutput ?? []) process.stderr.write(`${line}\n`);
    process.exit(1);
  }
  const cluster = { name, image, port: fakeKindPort(name), ready: true };
  writeCluster(cluster);
  if (options.kubeconfig) writeFileSync(options.kubeconfig, kubeconfig(cluster), { mode: 0o600 });
  process.stderr.write(` ✓ Starting control-plane 🕹️\nSet kubectl context to "kind-${name}"\n`);
}

function getClusters(rest: readonly string[]): void {
  flags(rest, []);
  const names = readdirSync(clustersDirectory)
    .filter((file) => file.endsWith(".json"))
    .map((file) => file.slice(0, -".json".length))
    .sort();
  if (names.length === 0) process.stderr.write("No kind clusters found.\n");
  else process.stdout.write(`${names.join("\n")}\n`);
}

function getKubeconfig(rest: readonly string[]): void {
  const options = flags(rest, ["name"], ["internal"]);
  const name = options.name ?? "kind";
  const cluster = readCluster(name);
  if (!cluster)
    fail(
      `could not locate any control plane nodes for cluster named '${name}'. Use the --name option to select a different cluster`,
    );
  if (!cluster.ready)
    fail(`failed to get cluster internal kubeconfig: command "cat /etc/kubernetes/admin.conf" failed`);
  process.stdout.write(kubeconfig(cluster, options.internal === "true"));
}

function deleteCluster(rest: readonly string[]): void {
  const options = flags(rest, ["name", "kubeconfig"]);
  const name = options.name ?? "kind";
  process.stderr.write(`Deleting cluster "${name}" ...\n`);
  const failed = join(directory as string, "delete-failures");
  const failures = Number(existsSync(failed) ? readFileSync(failed, "utf8") : "0");
  if (failures < (readConfig().deleteFailures ?? 0)) {
    writeFileSync(failed, String(failures + 1));
    fail(
      `failed to delete cluster "${name}": failed to delete nodes: command "docker rm -f -v ${name}-control-plane" failed with error: exit status 1\nCommand Output: Error response from daemon: Could not kill running container 0123abcd, cannot remove - tried to kill container, but did not receive an exit event`,
    );
  }
  rmSync(clusterFile(name), { force: true });
  if (options.kubeconfig && existsSync(options.kubeconfig)) {
    writeFileSync(
      options.kubeconfig,
      "apiVersion: v1\nkind: Config\nclusters: null\ncontexts: null\nusers: null\n",
    );
  }
}

const [verb, noun, ...rest] = args;
const command = `${verb ?? ""} ${noun ?? ""}`.trim();
if (command === "create cluster") await create(rest);
else if (command === "get clusters") getClusters(rest);
else if (command === "get kubeconfig") getKubeconfig(rest);
else if (command === "delete cluster") deleteCluster(rest);
else if (verb === "version") process.stdout.write("kind v0.30.0-fake go1.24.6 linux/amd64\n");
else fail(`unknown command "${command}" for "kind"`);
