/**
 * The container toolchain for tests: a running Docker engine, the kind CLI, the offline kind node image and
 * the engine's image, as `hack/containers/ensure.sh` brings them up (once per machine; seconds when cached).
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { KubeConfig } from "@kubernetes/client-node";
import { deleteKindCluster as deleteKindClusterWith } from "../../src/providers/kind/commands.ts";
import { dockerNetworkAddresses } from "../../src/providers/kind/metallb.ts";
import { withMachineLock } from "./machine-locks.ts";

/** What `hack/containers/ensure.sh` reports. */
export interface ContainerToolchain {
  /** The Docker CLI that talks to the running engine. */
  readonly docker: string;
  readonly kind: string;
  readonly kubectl: string;
  /** `kindest/node:v<version>`, present in the Docker engine. */
  readonly nodeImage: string;
  /** The engine's image built from the Dockerfile of this tree, present in the Docker engine. */
  readonly engineImage: string;
  /** The Kubernetes version of the node image, e.g. `1.36.3`. */
  readonly kubernetesVersion: string;
}

const ENSURE = join(import.meta.dirname, "..", "..", "hack", "containers", "ensure.sh");
/** Global setup runs the script once and hands its answer to every test file through this variable. */
export const TOOLCHAIN_ENV = "OPENMCP_TEST_CONTAINERS";

/** The value of one of the script's `key=value` lines; refused when it printed none. */
export function parseToolchainValue(stdout: string, key: keyof ContainerToolchain): string {
  for (const line of stdout.split("\n")) {
    const at = line.indexOf("=");
    if (at > 0 && line.slice(0, at).trim() === key) return line.slice(at + 1).trim();
  }
  throw new Error(`hack/containers/ensure.sh printed no ${key}=…; it printed:\n${stdout}`);
}

/** Parses the script's `key=value` lines, refusing an answer that lacks a key. */
export function parseToolchain(stdout: string): ContainerToolchain {
  const need = (key: keyof ContainerToolchain) => parseToolchainValue(stdout, key);
  return {
    docker: need("docker"),
    kind: need("kind"),
    kubectl: need("kubectl"),
    nodeImage: need("nodeImage"),
    engineImage: need("engineImage"),
    kubernetesVersion: need("kubernetesVersion"),
  };
}

let cached: ContainerToolchain | undefined;

/** The toolchain: from global setup if it ran, else by running the script (which builds what is missing). */
export function containerToolchain(): ContainerToolchain {
  if (cached) return cached;
  const handed = process.env[TOOLCHAIN_ENV];
  cached = handed
    ? (JSON.parse(handed) as ContainerToolchain)
    : parseToolchain(
        execFileSync(ENSURE, [], {
          encoding: "utf8",
          stdio: ["ignore", "pipe", "inherit"],
          timeout: 3_600_000,
        }),
      );
  return cached;
}

/** Runs a command and returns its stdout; a failure throws with its stderr. */
export function run(command: string, args: readonly string[], timeoutMs = 300_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      [...args],
      { encoding: "utf8", timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${command} ${args.join(" ")} failed: ${error.message}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

/** `kind delete cluster` with the toolchain's kind, tried again as the kind backend's delete is. */
export function deleteKindCluster(name: string, kubeconfigPath: string): Promise<void> {
  return deleteKindClusterWith((args) => run(containerToolchain().kind, args), name, kubeconfigPath);
}

/** `docker <args>` with the toolchain's CLI. */
export const docker = (...args: string[]): Promise<string> => run(containerToolchain().docker, args);

/** Names of the containers whose name starts with `prefix`: running or not, or (`"running"`) running only. */
export async function containersNamed(prefix: string, only?: "running"): Promise<string[]> {
  const which = only === "running" ? ["--filter", "status=running"] : ["-a"];
  const out = await docker("ps", ...which, "--format", "{{.Names}}", "--filter", `name=^${prefix}`);
  return out.split("\n").filter((name) => name !== "");
}

/**
 * Freezes the cgroup of one of the Pod containers in a kind node, from inside the node, as the node's runc leaves it
 * when killed while it starts a container (it freezes a new container's cgroup while setting its device rules).
 * A SIGKILL cannot end a frozen process on a cgroup v1 host: deleting the node must get past this. Returns the
 * cgroup's path in the node.
 */
export async function freezeAPodContainer(node: string): Promise<string> {
  const script = [
    // cgroup v1: the freezer hierarchy; v2: the unified one, frozen with cgroup.freeze. Freezing takes a moment
    // (v1 shows FREEZING until every task stopped, longer in a Pod that is busy starting): look for up to 20 s.
    'd=$(find /sys/fs/cgroup/freezer -name "cri-containerd-*.scope" 2>/dev/null | head -1)',
    'if [ -n "$d" ]; then look() { echo FROZEN >"$d/freezer.state"; cat "$d/freezer.state"; }',
    'else d=$(find /sys/fs/cgroup -name "cri-containerd-*.scope" | head -1); echo 1 >"$d/cgroup.freeze"',
    '  look() { grep -q "^frozen 1" "$d/cgroup.events" && echo FROZEN || echo FREEZING; }; fi',
    'i=0; state=$(look); while [ "$state" != FROZEN ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i+1)); state=$(look); done',
    '[ "$state" = FROZEN ] || { echo "$d is not frozen: $state" >&2; exit 1; }',
    'echo "$d"',
  ].join("\n");
  return (await docker("exec", node, "sh", "-c", script)).trim();
}

/** Removes, with their volumes, the containers whose names begin with one of `prefixes`: for a test's cleanup, so a
 * container that cannot be listed or removed is passed over rather than failing the cleanup. */
export async function removeContainersQuietly(prefixes: Iterable<string>): Promise<void> {
  for (const prefix of prefixes)
    for (const container of await containersNamed(prefix).catch(() => [] as string[]))
      await docker("rm", "-f", "-v", container).catch(() => undefined);
}

/** The address of this host on the `kind` Docker network, which containers on it can reach. */
export async function kindNetworkGateway(): Promise<string> {
  return dockerNetworkAddresses(await docker("network", "inspect", "kind", "--format", "{{json .}}")).gateway;
}

/** A kind cluster a test made for itself, with admin access. */
export interface TestKindCluster {
  readonly name: string;
  readonly kubeconfigPath: string;
  readonly kubeConfig: KubeConfig;
  /** `kubectl --kubeconfig <this cluster> <args>`. */
  kubectl(...args: string[]): Promise<string>;
  /** Loads an image from the Docker engine into the cluster's node (`kind load docker-image`). */
  loadImage(image: string): Promise<void>;
  delete(): Promise<void>;
}

/** A folder or socket of the Docker host mounted into the kind node (kind's `extraMounts`). */
export interface KindExtraMount {
  readonly hostPath: string;
  readonly containerPath: string;
}

/** How often a test's kind cluster is created before its file fails. */
const KIND_CREATE_TRIES = 3;
/** The pause before try n + 1 is n times this: a load that made kubeadm give up seldom passes at once. */
const KIND_CREATE_PAUSE_MS = 30_000;
/**
 * A test's kind cluster is thrown away with its file, so its etcd need not fsync (as the tests' own control
 * planes, `durable: false`): less for a node to do in the minute kubeadm gives its control plane to serve, on a
 * machine busy with other files (the CPU weight of Docker's containers, hack/containers/ensure.sh, was why it
 * did not in CI of stop 62).
 */
const ETCD_WITHOUT_FSYNC =
  'kind: ClusterConfiguration\netcd:\n  local:\n    extraArgs:\n      unsafe-no-fsync: "true"\n';

/**
 * Creates a kind cluster `name` from the offline node image, with `extraMounts` into its node, and waits until
 * its node is Ready.
 */
export async function createKindCluster(
  name: string,
  extraMounts: readonly KindExtraMount[] = [],
): Promise<TestKindCluster> {
  const tools = containerToolchain();
  const folder = mkdtempSync(join(tmpdir(), `kind-${name}-`));
  const kubeconfigPath = join(folder, "kubeconfig");
  const config = join(folder, "kind-config.json");
  writeFileSync(
    config,
    JSON.stringify({
      kind: "Cluster",
      apiVersion: "kind.x-k8s.io/v1alpha4",
      nodes: [
        {
          role: "control-plane",
          ...(extraMounts.length > 0 ? { extraMounts } : {}),
          kubeadmConfigPatches: [ETCD_WITHOUT_FSYNC],
        },
      ],
    }),
  );
  // One boot at a time on the machine (the engines' kind backends boot theirs beside it), and tried again as the
  // kind backend tries its creates: kubeadm gives up on a control plane slow to come up on a busy machine, as both
  // management clusters of run 18 did twice when they booted together at the run's start.
  for (let attempt = 1; ; attempt++) {
    await deleteKindCluster(name, kubeconfigPath);
    try {
      await withMachineLock("kind-boot", 30 * 60_000, () =>
        run(
          tools.kind,
          [
            "create",
            "cluster",
            "--name",
            name,
            "--image",
            tools.nodeImage,
            "--config",
            config,
            "--kubeconfig",
            kubeconfigPath,
            "--wait",
            "5m",
            // The node stays when kubeadm fails, so its control plane's own account can be read below.
            "--retain",
          ],
          600_000,
        ),
      );
      break;
    } catch (error) {
      const said = whatKindSaid((error as Error).message);
      const node = await controlPlaneReport(name);
      if (attempt >= KIND_CREATE_TRIES) {
        await deleteKindCluster(name, kubeconfigPath);
        rmSync(folder, { recursive: true, force: true });
        throw new Error(`kind cluster ${name}: create failed ${attempt} times; the last: ${said}\n${node}`, {
          cause: error,
        });
      }
      console.warn(
        `kind cluster ${name}: create failed (try ${attempt} of ${KIND_CREATE_TRIES}: ${said}), trying again\n${node}`,
      );
      await sleep(attempt * KIND_CREATE_PAUSE_MS);
    }
  }
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(readFileSync(kubeconfigPath, "utf8"));
  return {
    name,
    kubeconfigPath,
    kubeConfig,
    kubectl: (...args) => run(tools.kubectl, ["--kubeconfig", kubeconfigPath, ...args]),
    loadImage: async (image) => {
      await run(tools.kind, ["load", "docker-image", image, "--name", name], 600_000);
    },
    delete: async () => {
      await deleteKindCluster(name, kubeconfigPath);
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/**
 * The lines of a failed `kind create cluster` that say what failed: kind's `ERROR:` and kubeadm's `error:` lines
 * (kubeadm's verbose log and Go stack around them say nothing more), else its last three lines.
 */
export function whatKindSaid(output: string): string {
  const lines = output.split("\n").filter((line) => line.trim() !== "");
  const errors = lines.filter((line) => /^(ERROR|error):/.test(line.trim()));
  return (errors.length > 0 ? errors : lines.slice(-3)).map((line) => line.trim().slice(0, 400)).join(" | ");
}

/**
 * What the control-plane node of kind cluster `name` says of its etcd and kube-apiserver: the log files of each
 * (one per run of the container, so restarts show) and the last lines of the two newest (why a create failed,
 * where kind only says kubeadm gave up). Read from the node's files: the node image has no crictl. Never
 * throws: a node that is gone says so.
 */
async function controlPlaneReport(name: string): Promise<string> {
  const script = [
    "for c in etcd kube-apiserver; do",
    "  runs=$(ls /var/log/pods/kube-system_$c-*/$c/ 2>/dev/null | tr '\\n' ' ')",
    '  [ -n "$runs" ] || runs="none (the kubelet never started it)"',
    '  echo "--- $c runs: $runs"',
    "  for f in $(ls -t /var/log/pods/kube-system_$c-*/$c/*.log 2>/dev/null | head -2); do",
    '    echo "--- $f"; tail -n 12 "$f" | cut -c1-400; done; done',
  ].join("\n");
  return docker("exec", `${name}-control-plane`, "sh", "-c", script).catch(
    (error: Error) => `(no report from the node: ${error.message.split("\n")[0]})`,
  );
}

/**
 * Every log line of the Pods `selector` picks in `namespace` that says the API server forbade a call (a missing
 * RBAC rule), from their current containers and, unless `previous` is false, their previous ones.
 */
export async function forbiddenLogLines(
  cluster: Pick<TestKindCluster, "kubectl">,
  namespace: string,
  selector: string,
  { previous = true }: { readonly previous?: boolean } = {},
): Promise<string[]> {
  const names = await cluster
    .kubectl("-n", namespace, "get", "pods", "-l", selector, "-o", "jsonpath={.items[*].metadata.name}")
    .catch(() => "");
  const lines: string[] = [];
  for (const pod of names.split(" ").filter((name) => name !== "")) {
    for (const earlier of previous ? [false, true] : [false]) {
      const logs = await cluster
        .kubectl("-n", namespace, "logs", pod, "--all-containers", ...(earlier ? ["--previous"] : []))
        .catch(() => "");
      lines.push(...logs.split("\n").filter((line) => /forbidden|"code":403/i.test(line)));
    }
  }
  return lines;
}
