/**
 * MetalLB on a kind cluster, as openMCP's kind provider gives it: LoadBalancer Services get an address from a
 * slice of the kind Docker network's IPv4 subnet, announced in L2 mode by the speaker on the node, so the
 * Docker host (and every container on the network) reaches them. What is installed comes from an assets
 * folder `hack/metallb/build.sh` makes (the release's manifest and the names of its two images, which the
 * Docker engine holds); the kind backend loads the images into the node, applies the manifest, then the pool.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import type { BackendCondition } from "../api/backend.ts";

/** The condition on the Cluster that says whether LoadBalancer Services work (openMCP's kind provider's name). */
export const METALLB_CONDITION = "MetalLBReady";

/** Addresses each kind cluster's pool gets. */
export const METALLB_POOL_SIZE = 8;

/** The MetalLB release `hack/metallb/build.sh` builds (keep the two in step). */
export const METALLB_VERSION = "v0.15.2";

/** Where `hack/metallb/build.sh` caches its assets on this machine. */
export function defaultMetallbFolder(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "openmcp-engine", "metallb", METALLB_VERSION);
}

/** What `hack/metallb/build.sh` made: the manifest to apply and the images it names. */
export interface MetallbAssets {
  readonly folder: string;
  /** Path of the release's `metallb-native.yaml`. */
  readonly manifest: string;
  /** The controller's and the speaker's image, as the manifest names them. */
  readonly images: readonly string[];
}

/** Reads an assets folder; throws saying how to make one when it is not whole. */
export function readMetallbAssets(folder: string): MetallbAssets {
  const manifest = join(folder, "metallb-native.yaml");
  let images: string[];
  try {
    readFileSync(manifest);
    images = readFileSync(join(folder, "images"), "utf8")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "");
  } catch {
    images = [];
  }
  if (images.length === 0) {
    throw new Error(
      `kind backend: ${folder} holds no MetalLB (metallb-native.yaml and images); run hack/metallb/build.sh, which prints the folder to pass as --backend-option metallb=<folder>`,
    );
  }
  return { folder, manifest, images };
}

/**
 * `--backend-option metallb`: absent or `false` → no MetalLB; `true` → the folder `hack/metallb/build.sh`
 * caches on this machine (`defaultFolder`); anything else is the assets folder itself.
 */
export function metallbFolderOption(value: string | undefined, defaultFolder: string): string | undefined {
  if (value === undefined || value === "false") return undefined;
  if (value === "true") return defaultFolder;
  if (value.trim() === "")
    throw new Error("kind backend: metallb must be true, false or the folder hack/metallb/build.sh printed");
  return value;
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
  const [base, prefixText] = subnet.split("/");
  const prefix = Number(prefixText);
  const network = base === undefined ? undefined : toNumber(base);
  if (network === undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > 30)
    throw new Error(`the kind network's subnet "${subnet}" is not an IPv4 CIDR`);
  const hosts = 2 ** (32 - prefix);
  const start = network - (network % hosts);
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

/** The IPv4 subnet of a Docker network and the IPv4 addresses on it, from `docker network inspect <net> --format '{{json .}}'`. */
export function dockerNetworkAddresses(inspected: string): { subnet: string; addresses: string[] } {
  const network = JSON.parse(inspected) as {
    IPAM?: { Config?: Array<{ Subnet?: string; Gateway?: string }> };
    Containers?: Record<string, { IPv4Address?: string }>;
  };
  const ipv4 = (network.IPAM?.Config ?? []).find(
    (c) => c.Subnet && /^\d+\.\d+\.\d+\.\d+\/\d+$/.test(c.Subnet),
  );
  if (!ipv4?.Subnet) throw new Error("the kind network has no IPv4 subnet");
  const addresses = Object.values(network.Containers ?? {})
    .map((container) => container.IPv4Address?.split("/")[0] ?? "")
    .filter((address) => address !== "");
  if (ipv4.Gateway) addresses.push(ipv4.Gateway);
  return { subnet: ipv4.Subnet, addresses };
}

/**
 * `sh -c` script that installs MetalLB into a kind cluster, run detached (it takes a minute) with its exit
 * status recorded. Arguments: docker, kind, kind cluster name, node container, manifest file, pool file, then
 * the images. Every step is idempotent, so an interrupted install is simply run again. A failing step ends
 * with one `ERROR:` line naming it and the last lines it printed.
 */
export const metallbInstallScript = [
  'docker="$1" kind="$2" cluster="$3" node="$4" manifest="$5" pool="$6"',
  "shift 6",
  "out=$(mktemp) && trap 'rm -f \"$out\"' EXIT",
  'step() { what="$1"; shift; echo "metallb: $what"; if ! "$@" >"$out" 2>&1; then echo "ERROR: $what failed: $(tail -n 3 "$out" | tr "\\n" " ")"; exit 1; fi; }',
  'kubectl() { "$docker" exec -i "$node" kubectl --kubeconfig=/etc/kubernetes/admin.conf "$@"; }',
  'step "loading the images $* into the node" "$kind" load docker-image --name "$cluster" "$@"',
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
