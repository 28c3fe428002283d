/**
 * The `kind` backend (one kind cluster per Cluster, driven through the `kind` CLI): the module the engine loads
 * for `--backend kind`, with the factory that makes it from `--backend-option`s.
 */
import type { BackendContext, BackendFactory } from "../../api/backend-contract.ts";
import { BACKEND_CONTRACT_VERSION } from "../../api/backend-contract.ts";
import { durationOption } from "../shared/settings.ts";
import { KindBackend } from "./backend.ts";
import { KindCli, listLocalNodeImages } from "./commands.ts";
import { METALLB_IMAGES, metallbOption } from "./metallb.ts";
import { findExecutable, kindAccess, kindAuthnOption, parallelCreatesOption } from "./settings.ts";

/** Built with the engine: the backend contract this engine implements. */
export const contractVersion = BACKEND_CONTRACT_VERSION;

/**
 * The `kind` backend from `--backend-option`s: `kind` (the executable; default `kind` on PATH), `wait` (how
 * long `kind create cluster` waits for the control plane, e.g. `5m`; default 5 min) and `docker` (the
 * Docker CLI kind uses, to list the node images at hand; default `docker` on PATH) and `access` (`host` or
 * `network`, see {@link KindBackendOptions.access}; default `network` in a Pod — `KUBERNETES_SERVICE_HOST` is
 * set — else `host`), `parallelCreates` (see {@link KindBackendOptions.parallelCreates}; default half this
 * machine's processors, at least 1: a kind node boots a whole control plane) and `metallb` (`true` or
 * `false`, default `false`: MetalLB's images come from `hack/metallb/build.sh`, not from a registry, and
 * installing it adds about a minute to each create), `retryDelay` (the wait before a failed create is tried
 * again, doubled for each later try; default 30s, see {@link KindBackendOptions.retryDelayMs}), `authn` (`volume` or
 * `folder`, default `volume`: see {@link KindBackendOptions.authn}), `etcdutl` (the etcdutl a snapshot's restore copies into the
 * node; default: built by `hack/kube/build.sh etcdutl` on the first restore). Kind itself needs Docker (or Podman); that is checked by
 * kind, and its errors show in the failed Cluster.
 */
export const createBackend: BackendFactory = async (context: BackendContext) => {
  const kind = findExecutable(context.options.kind ?? "kind");
  const access = kindAccess(context.options.access, process.env);
  const waitMs = durationOption(context.options, "wait", { backend: "kind", examples: "90s or 5m" });
  const retryDelayMs = durationOption(context.options, "retryDelay", {
    backend: "kind",
    examples: "30s or 2m",
  });
  const log = context.log.with({ backend: "kind" });
  const docker = context.options.docker ?? "docker";
  // Images of a Kubernetes release this kind cannot create are not offered (see newestMinorKindCreates).
  const newestMinor = new KindCli(kind, docker, 30_000).newestMinor();
  const localVersions = await listLocalNodeImages(docker, log, await newestMinor);
  const parallelCreates = parallelCreatesOption(context.options.parallelCreates);
  const metallb = metallbOption(context.options.metallb);
  const network = process.env.KIND_EXPERIMENTAL_DOCKER_NETWORK || "kind";
  const authn = kindAuthnOption(context.options.authn);
  return new KindBackend({
    authn,
    parallelCreates,
    ...(metallb ? { metallb: METALLB_IMAGES } : {}),
    network,
    kind,
    stateDirectory: context.stateDirectory,
    ...(waitMs === undefined ? {} : { waitMs }),
    ...(retryDelayMs === undefined ? {} : { retryDelayMs }),
    localVersions,
    newestMinor, // asked once: the backend's offer reads it again
    docker,
    ...(context.options.etcdutl ? { etcdutl: context.options.etcdutl } : {}),
    access,
    log,
    clock: context.clock,
  });
};
