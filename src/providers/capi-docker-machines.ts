/**
 * Cluster API's Docker machines (CAPD) of a CAPI Cluster, through the Docker CLI: which containers it has (CAPD labels
 * each with the Cluster's name, as kind does its nodes), stopping them, and starting them again at the addresses they
 * had — a stopped container gives its addresses back to Docker, and a restarted one would get the next free ones, which
 * kubeadm's certificates, etcd and CAPD's load balancer do not name.
 */

import type { DockerMachine, MachineAddress, MachineAddresses, MachineStop } from "./capi-sleep.ts";
import type { DockerRun } from "./shared/docker-cli.ts";

/** CAPD's labels on a machine container: the CAPI Cluster's name, and the machine's role. */
export const CAPD_LABELS = { cluster: "io.x-k8s.kind.cluster", role: "io.x-k8s.kind.role" } as const;

/** One line per container: `[name, running, role, networks]`, each as JSON. */
const INSPECT_FORMAT = `[{{json .Name}},{{json .State.Running}},{{json (index .Config.Labels "${CAPD_LABELS.role}")}},{{json .NetworkSettings.Networks}}]`;

interface InspectedNetwork {
  readonly IPAddress?: string;
  readonly GlobalIPv6Address?: string;
}

/** A machine from one line `docker inspect --format INSPECT_FORMAT` printed. */
export function parseMachine(line: string): DockerMachine {
  const [name, running, role, networks] = JSON.parse(line) as [
    string,
    boolean,
    string | null,
    Record<string, InspectedNetwork> | null,
  ];
  const addresses: Record<string, MachineAddress> = {};
  for (const [network, settings] of Object.entries(networks ?? {})) {
    const address = {
      ...(settings.IPAddress ? { ipv4: settings.IPAddress } : {}),
      ...(settings.GlobalIPv6Address ? { ipv6: settings.GlobalIPv6Address } : {}),
    };
    if (running && Object.keys(address).length > 0) addresses[network] = address;
  }
  return { name: name.replace(/^\//, ""), role: role ?? "", running, addresses };
}

/** The Docker machines of CAPI Clusters on one Docker engine. */
export class DockerMachines {
  readonly #docker: DockerRun;

  constructor(docker: DockerRun) {
    this.#docker = docker;
  }

  /** The machine containers of CAPI Cluster `cluster` (by CAPD's label), running or not. */
  async of(cluster: string): Promise<DockerMachine[]> {
    const ids = (
      await this.#docker(["ps", "-a", "-q", "--filter", `label=${CAPD_LABELS.cluster}=${cluster}`])
    )
      .split(/\s+/)
      .filter(Boolean);
    if (ids.length === 0) return [];
    const lines = await this.#docker(["inspect", "--format", INSPECT_FORMAT, ...ids]);
    return lines.split("\n").filter(Boolean).map(parseMachine);
  }

  /** Whether the machines of `cluster` can be stopped (the Docker engine answers and holds some), and which. */
  async stopOf(cluster: string): Promise<MachineStop> {
    let machines: DockerMachine[];
    try {
      machines = await this.of(cluster);
    } catch (error) {
      return { can: false, why: `the Docker engine cannot be asked (${(error as Error).message})` };
    }
    if (machines.length === 0)
      return {
        can: false,
        why: `the engine's Docker engine holds no container labelled ${CAPD_LABELS.cluster}=${cluster}`,
      };
    return { can: true, machines };
  }

  /** Stops the containers (Docker's own grace period: their kubelet and etcd shut down cleanly). */
  async stop(machines: readonly DockerMachine[]): Promise<void> {
    if (machines.length > 0) await this.#docker(["stop", ...machines.map((machine) => machine.name)]);
  }

  /**
   * Starts the recorded machines that are not running, each first given back its recorded address on each network
   * (disconnected and connected again with `--ip`/`--ip6`: Docker keeps such an address for the container).
   */
  async start(recorded: MachineAddresses): Promise<void> {
    const names = Object.keys(recorded);
    if (names.length === 0) return;
    const running = new Map(
      (await this.#docker(["inspect", "--format", INSPECT_FORMAT, ...names]))
        .split("\n")
        .filter(Boolean)
        .map(parseMachine)
        .map((machine) => [machine.name, machine.running]),
    );
    const stopped = names.filter((name) => running.get(name) === false);
    for (const name of stopped) {
      for (const [network, address] of Object.entries(recorded[name] ?? {})) {
        await this.#docker(["network", "disconnect", "--force", network, name]).catch(() => undefined);
        await this.#docker([
          "network",
          "connect",
          ...(address.ipv4 ? ["--ip", address.ipv4] : []),
          ...(address.ipv6 ? ["--ip6", address.ipv6] : []),
          network,
          name,
        ]);
      }
    }
    if (stopped.length > 0) await this.#docker(["start", ...stopped]);
  }
}
