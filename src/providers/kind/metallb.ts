/**
 * MetalLB on a kind cluster, as openMCP's kind provider gives it: LoadBalancer Services get an address from a
 * slice of the kind Docker network's IPv4 subnet, announced in L2 mode by the speaker on the node, so the
 * Docker host (and every container on the network) reaches them. What is installed is in the Docker engine
 * alone, as `hack/metallb/build.sh` puts it there (two images, the controller's carrying the release's
 * manifest), so an engine in a Pod needs only the Docker socket: the kind backend loads the images into the
 * node, applies the manifest with the node's kubectl, then the pool.
 */
import { stringify } from "yaml";
import type { BackendCondition } from "../../api/backend.ts";

/** The condition on the Cluster that says whether LoadBalancer Services work (openMCP's kind provider's name). */
export const METALLB_CONDITION = "MetalLBReady";

/** Addresses each kind cluster's pool gets. */
export const METALLB_POOL_SIZE = 8;

/** The MetalLB release `hack/metallb/build.sh` builds (keep the two in step). */
export const METALLB_VERSION = "v0.15.2";

/** The images MetalLB runs from; the controller's also carries the release's manifest, `/metallb-native.yaml`. */
export interface MetallbImages {
  readonly controller: string;
  readonly speaker: string;
}

/** What `hack/metallb/build.sh` puts into the Docker engine: the names the release's manifest uses. */
export const METALLB_IMAGES: MetallbImages = {
  controller: `quay.io/metallb/controller:${METALLB_VERSION}`,
  speaker: `quay.io/metallb/speaker:${METALLB_VERSION}`,
};

/** `--backend-option metallb`: `true` or `false` (the default, also when absent). */
export function metallbOption(value: string | undefined): boolean {
  if (value === undefined || value === "false") return false;
  if (value === "true") return true;
  throw new Error(`kind backend: metallb "${value}" must be true or false`);
}

/** An inclusive range of IPv4 addresses. */
export interface AddressRange {
  readonly first: string;
  readonly last: string;
}

const toNumber = (address: string): number | undefined => {
  const parts = address.split(".");
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part) && Number(part) <= 255))
    return undefined;
  return parts.reduce((sum, part) => sum * 256 + Number(part), 0);
};

const toAddress = (value: number): string =>
  [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join(".");

/** An IPv4 CIDR's first address (as a number) and its size; throws for anything else, or a block with no hosts. */
function ipv4Block(subnet: string): { start: number; hosts: number } {
  const [base, prefixText] = subnet.split("/");
  const prefix = Number(prefixText);
  const network = base === undefined ? undefined : toNumber(base);
  if (network === undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > 30)
    throw new Error(`the kind network's subnet "${subnet}" is not an IPv4 CIDR`);
  const hosts = 2 ** (32 - prefix);
  return { start: network - (network % hosts), hosts };
}

/**
 * The pool of the kind cluster whose (control-plane) node has `nodeAddress` in `subnet` (e.g. `172.18.0.0/16`):
 * the node's host number `k` picks the k-th block of {@link METALLB_POOL_SIZE} addresses counted down from the
 * top of the subnet (Docker hands out container addresses from the bottom). Two live nodes never share an
 * address, so sibling clusters never share a pool, with no bookkeeping across engines; a cluster made later
 * on a freed address takes over the pool of the one that had it, which is gone. Throws when the block would
 * reach down to the addresses Docker hands out, or when an address in `taken` (a container's, the gateway's)
 * lies in it.
 */
export function metallbPoolRange(
  subnet: string,
  nodeAddress: string,
  taken: readonly string[] = [],
  size = METALLB_POOL_SIZE,
): AddressRange {
  const { start, hosts } = ipv4Block(subnet);
  const node = toNumber(nodeAddress);
  if (node === undefined || node <= start || node >= start + hosts - 1)
    throw new Error(`node address ${nodeAddress} is not a host of ${subnet}`);
  const k = node - start;
  const high = hosts - 2 - size * (k - 1); // host number of the block's last address (below the broadcast)
  const low = high - size + 1;
  if (low <= k)
    throw new Error(
      `${subnet} has no room for a pool of ${size} addresses for the node at ${nodeAddress} (host ${k}); use a larger kind network`,
    );
  const range = { first: toAddress(start + low), last: toAddress(start + high) };
  for (const address of taken) {
    const value = toNumber(address);
    if (value !== undefined && value >= start + low && value <= start + high)
      throw new Error(`address ${address} on the kind network lies in the pool ${range.first}-${range.last}`);
  }
  return range;
}

/** The IPAddressPool and L2Advertisement (both `kind-network`) that give Services addresses from `range`. */
export function metallbPoolManifest(range: AddressRange): string {
  const metadata = { name: "kind-network", namespace: "metallb-system" };
  return [
    {
      apiVersion: "metallb.io/v1beta1",
      kind: "IPAddressPool",
      metadata,
      spec: { addresses: [`${range.first}-${range.last}`] },
    },
    {
      apiVersion: "metallb.io/v1beta1",
      kind: "L2Advertisement",
      metadata,
      spec: { ipAddressPools: ["kind-network"] },
    },
  ]
    .map((object) => stringify(object))
    .join("---\n");
}

/**
 * The IPv4 subnet of a Docker network, its gateway and the IPv4 addresses on it (the gateway's too), from `docker
 * network inspect <net> --format '{{json .}}'`. A network made with `--subnet` but no `--gateway` records none:
 * Docker gives the bridge the subnet's first host address, so that is its gateway.
 */
export function dockerNetworkAddresses(inspected: string): {
  subnet: string;
  gateway: string;
  addresses: string[];
} {
  const network = JSON.parse(inspected) as {
    IPAM?: { Config?: Array<{ Subnet?: string; Gateway?: string }> };
    Containers?: Record<string, { IPv4Address?: string }>;
  };
  const ipv4 = (network.IPAM?.Config ?? []).find(
    (c) => c.Subnet && /^\d+\.\d+\.\d+\.\d+\/\d+$/.test(c.Subnet),
  );
  if (!ipv4?.Subnet) throw new Error("the kind network has no IPv4 subnet");
  const gateway = ipv4.Gateway || toAddress(ipv4Block(ipv4.Subnet).start + 1);
  const addresses = Object.values(network.Containers ?? {})
    .map((container) => container.IPv4Address?.split("/")[0] ?? "")
    .filter((address) => address !== "");
  return { subnet: ipv4.Subnet, gateway, addresses: [...addresses, gateway] };
}

/**
 * `sh -c` script that installs MetalLB into a kind cluster, run detached (it takes a minute) with its exit
 * status recorded. Arguments: docker, kind, kind cluster name, node container, a file for the manifest, the
 * pool file, the controller's image, the speaker's. Every step is idempotent, so an interrupted install is
 * simply run again. A failing step ends with one `ERROR:` line naming it and the last lines it printed.
 */
export const metallbInstallScript = [
  'docker="$1" kind="$2" cluster="$3" node="$4" manifest="$5" pool="$6" controller="$7" speaker="$8"',
  "out=$(mktemp) && trap 'rm -f \"$out\"' EXIT",
  'step() { what="$1"; shift; echo "metallb: $what"; if ! "$@" >"$out" 2>&1; then echo "ERROR: $what failed: $(tail -n 3 "$out" | tr "\\n" " ")"; exit 1; fi; }',
  'kubectl() { "$docker" exec -i "$node" kubectl --kubeconfig=/etc/kubernetes/admin.conf "$@"; }',
  'read_manifest() { "$docker" run --rm --network none --entrypoint cat "$controller" /metallb-native.yaml >"$manifest"; }',
  'step "loading the images $controller $speaker (hack/metallb/build.sh makes them) into the node" "$kind" load docker-image --name "$cluster" "$controller" "$speaker"',
  'step "reading the manifest from $controller" read_manifest',
  'step "applying the MetalLB manifest" kubectl apply -f - <"$manifest"',
  'step "waiting for the MetalLB controller" kubectl -n metallb-system rollout status deployment/controller --timeout=240s',
  'step "waiting for the MetalLB speaker" kubectl -n metallb-system rollout status daemonset/speaker --timeout=240s',
  // The controller's admission webhook may refuse the pool for a few seconds after it reports ready.
  'tries=0; until kubectl apply -f - <"$pool" >"$out" 2>&1; do tries=$((tries + 1)); if [ "$tries" -ge 60 ]; then echo "ERROR: applying the address pool failed: $(tail -n 3 "$out" | tr "\\n" " ")"; exit 1; fi; sleep 2; done',
  'echo "metallb: installed"',
].join("\n");

/** Where a cluster's MetalLB install is. */
export type MetallbState =
  | { readonly kind: "absent" }
  | { readonly kind: "running" }
  | { readonly kind: "succeeded" }
  | { readonly kind: "failed"; readonly message: string };

/** The {@link METALLB_CONDITION} for an install state and the pool it serves. */
export function metallbCondition(state: MetallbState, pool: string | undefined): BackendCondition {
  const from = pool ? ` from ${pool}` : "";
  switch (state.kind) {
    case "succeeded":
      return {
        type: METALLB_CONDITION,
        status: "True",
        reason: "Installed",
        message: `MetalLB gives LoadBalancer Services addresses${from} on the kind network`,
      };
    case "failed":
      return { type: METALLB_CONDITION, status: "False", reason: "InstallFailed", message: state.message };
    default:
      return {
        type: METALLB_CONDITION,
        status: "Unknown",
        reason: "Installing",
        message: `Installing MetalLB${pool ? ` with the pool ${pool}` : ""}`,
      };
  }
}

/**
 * Where an install is, from its record (absent: never started) and exit status (`running`, or undefined when
 * it went with none: interrupted, so absent and run again); `log` is read only for a failed install.
 */
export function metallbStateOf(recorded: boolean, exit: string | undefined, log: () => string): MetallbState {
  if (!recorded || exit === undefined) return { kind: "absent" };
  if (exit === "running") return { kind: "running" };
  if (exit === "0") return { kind: "succeeded" };
  const said = log();
  return {
    kind: "failed",
    message: `MetalLB install exited with ${exit}${said ? `: ${said}` : ""}; delete the Cluster and create it again to retry`,
  };
}
