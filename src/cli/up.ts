/** `openmcp-engine up`: a local control plane, the engine on it, and a demo whose Clusters you watch go Ready. */

import { createWriteStream, existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { KubeConfig, KubernetesObjectApi, PatchStrategy } from "@kubernetes/client-node";
import type { ClusterTarget } from "../api/backend.ts";
import { ENGINE_API_VERSION } from "../api/constants.ts";
import { objectKey } from "../api/object-key.ts";
import { type ControlPlane, kubeconfigYaml, startControlPlane } from "../controlplane/control-plane.ts";
import { kubeAssetVersions } from "../controlplane/kube-assets.ts";
// Types only: the stand-ins load with a dynamic import, when the flags ask for them (the package has none).
import type { CapiManager, GardenerDemo, OidcIssuer } from "../dev/up-stand-ins.ts";
import { clusterTarget } from "../machines/cluster/step.ts";
import { installCrds, installingCrds } from "../runtime/api-server/install-crds.ts";
import type { Engine } from "../runtime/engine.ts";
import { CACHES } from "../runtime/kinds/caches.ts";
import { CONTROL_PLANE_CACHES } from "../runtime/kinds/engine-control-plane/caches.ts";
import { createLogger } from "../runtime/logger.ts";
import { engineFromSettings } from "../runtime/start/engine-from-settings.ts";
import { type AdminKubeconfigChange, keepAdminKubeconfigs } from "./admin-kubeconfigs.ts";
import { applyManifests, LiveView } from "./demo.ts";
import { CheckoutNeededError, kubeAssets, loadFromCheckout, packageFile } from "./from-checkout.ts";
import { kindBackendOptions } from "./kind-toolchain.ts";
import { engineFlags, exitOnLost, parseEngineArgs, untilSignal } from "./run.ts";
import {
  DEFAULT_INSPECT_ADDRESS,
  DEFAULT_LIVE_VIEW_ADDRESS,
  startViews,
  type ViewFlags,
  viewFlagOptions,
  viewFlags,
} from "./views.ts";

export const upUsage = `Usage: openmcp-engine up [flags]

Starts etcd and kube-apiserver on loopback with the CRDs installed, runs the engine on it (provider
"local", the local backend: every Cluster becomes a real API server on this machine), applies the demo
(a ProviderConfig and Clusters) and shows the Clusters live. Each Cluster that becomes Ready gets its admin
kubeconfig in .state/clusters/<namespace>.<name>.kubeconfig (backends that give admin access, e.g. local),
removed when the Cluster is deleted. Until Ctrl-C; then everything stops and all data is removed.

Flags:
  --kubeconfig-out <path>   where to write the admin kubeconfig (default: .state/kubeconfig)
  --crds <folder>           CRDs to install (default: the crds/ folder of this project)
  --assets <folder>         folder with kube-apiserver and etcd (default: KUBEBUILDER_ASSETS, else built once by hack/kube/build.sh)
  --no-controller           only the control plane: no engine, no demo
  --capi                    also run Cluster API's own manager (built once by hack/capi/build.sh) and the
                            engine's Cluster API side; the demo adds examples/demo-capi: a CAPI Cluster on
                            an EngineCluster, which CAPI moves to Provisioned, and one whose control plane is
                            an EngineControlPlane, which CAPI calls Available
  --no-demo                 the engine but no sample objects
  --demo-dir <folder>       sample objects to apply (default: examples/demo-<backend>)
  --log <path>              the engine's JSON log (default: .state/engine.log)
  --live-view-address <addr>  the read-only live view page: every Cluster on its statechart, offline
                            (default: ${DEFAULT_LIVE_VIEW_ADDRESS}, another port if taken; 0 turns it off)
  --inspect                 stream the machines to the Stately inspector too (development; relay on
                            ${DEFAULT_INSPECT_ADDRESS} or a free port, --inspect-address to change)
  Engine flags as for 'run' (defaults here: --provider-name local --environment local --backend local;
  --backend simulated needs no extra processes; --backend gardener starts a garden: Gardener's own API server,
  built once by hack/gardener/build.sh, and a simulated gardenlet).
  -h, --help                show this help`;

/** Runs `up` with its command-line arguments; resolves after Ctrl-C (SIGINT) or SIGTERM. */
export async function up(args: string[]): Promise<void> {
  const flags = parseFlags(args);
  const standIns = await standInsFor(flags);
  const local = await startLocalControlPlane(flags);
  const { controlPlane } = local;
  const gardenerDemo = await standIns?.gardener?.(controlPlane.kubeConfig, log);
  const capi = await standIns?.capi?.(controlPlane.kubeConfig);
  const engine = flags.controller ? await startUpEngine(flags, local) : undefined;
  const demo = engine && flags.demo ? await startDemo(flags, local, engine, capi !== undefined) : undefined;
  console.log("Press Ctrl-C to stop; all data is removed then.");
  await stopOnSignal([
    demo?.stop,
    engine?.stop,
    demo?.issuer?.stop,
    gardenerDemo?.stop,
    capi?.stop,
    () => controlPlane.stop(),
  ]);
}

/** A line of `up`'s progress, indented under the heading it belongs to. */
function log(message: string): void {
  console.log(`  ${message}`);
}

/** How `up` starts the stand-ins its flags ask for (each runs beside the local control plane). */
interface StandInStarters {
  /** The gardener backend's demo garden: Gardener's own API server and a simulated gardenlet. */
  readonly gardener?: (management: KubeConfig, log: (message: string) => void) => Promise<GardenerDemo>;
  /** Cluster API's own core manager. */
  readonly capi?: (kubeConfig: KubeConfig) => Promise<CapiManager>;
}

/**
 * Loads the stand-ins the flags need, before anything starts: the gardener demo's garden and Cluster API's
 * manager come only with a checkout of the repository (undefined when none is needed).
 */
async function standInsFor(flags: UpFlags): Promise<StandInStarters | undefined> {
  const gardener = flags.controller && flags.demo && flags.engine.backend === "gardener";
  const capi = flags.engine.capi === true;
  if (!gardener && !capi) return undefined;
  const what = capi ? "up --capi" : "up --backend gardener";
  const standIns = await loadFromCheckout(what, () => import("../dev/up-stand-ins.ts"));
  return {
    gardener: gardener ? standIns.startGardenerDemo : undefined,
    capi: capi
      ? async (kubeConfig) => {
          const manager = await standIns.startCapiManager({ kubeConfig, installCrds, log });
          console.log(
            `  Cluster API: ${manager.version} core manager, pid ${manager.process.pid}, log ${manager.process.logPath}`,
          );
          return manager;
        }
      : undefined,
  };
}

/** The local control plane `up` runs everything on, and how to reach it. */
interface LocalControlPlane {
  readonly controlPlane: ControlPlane;
  /** The folder of kube-apiserver and etcd (the local backend runs the same binaries). */
  readonly assetsDirectory: string;
  /** `kubectl` with the admin kubeconfig, for the hints `up` prints. */
  readonly kubectl: string;
}

/** Starts etcd and kube-apiserver with the CRDs installed, writes the admin kubeconfig and says how to use it. */
async function startLocalControlPlane(flags: UpFlags): Promise<LocalControlPlane> {
  const assets = kubeAssets(flags.assets);
  const versions = kubeAssetVersions(assets);
  console.log(
    `Starting kube-apiserver ${versions.kubernetes} and etcd ${versions.etcd} from ${assets.directory}`,
  );
  const controlPlane = await startControlPlane({
    assetsDirectory: assets.directory,
    prepare: installingCrds(flags.crds, log),
    log,
  });
  await mkdir(dirname(flags.kubeconfigOut), { recursive: true });
  await writeFile(flags.kubeconfigOut, kubeconfigYaml(controlPlane.kubeConfig), { mode: 0o600 });
  const kubectl = `kubectl --kubeconfig ${flags.kubeconfigOut}`;
  console.log(`
Local control plane is up at ${controlPlane.server}.
  kubeconfig:  ${flags.kubeconfigOut}
  try:         ${kubectl} get crds
               ${kubectl} get providerconfigs,clusterprofiles
               ${kubectl} get clusters -A -o wide
               ${kubectl} get clusterrequests,clusterrequestgrants -A
  processes:   etcd pid ${controlPlane.etcd.pid}, kube-apiserver pid ${controlPlane.apiServer.pid}
  logs:        ${controlPlane.directory}/{etcd,kube-apiserver}.log`);
  return { controlPlane, assetsDirectory: assets.directory, kubectl };
}

/** The engine `up` runs, with the admin kubeconfigs it keeps for Ready Clusters. */
interface UpEngine {
  readonly engine: Engine;
  readonly kubeconfigs: ReturnType<typeof keepAdminKubeconfigs>;
  /** From now on, say each admin kubeconfig written or removed (the demo first waits until all are Ready). */
  announceKubeconfigs(): void;
  stop(): Promise<void>;
}

/** Starts the engine on the local control plane with its views; it logs to `--log`. */
async function startUpEngine(flags: UpFlags, local: LocalControlPlane): Promise<UpEngine> {
  const backendOptions =
    flags.engine.backend === "kind"
      ? kindBackendOptions(flags.engine.backendOptions, log)
      : flags.engine.backendOptions;
  await mkdir(dirname(flags.log), { recursive: true });
  const logFile = createWriteStream(flags.log, { flags: "a" });
  const engineLog = createLogger({
    level: flags.engine.logLevel,
    write: (line) => logFile.write(`${line}\n`),
  });
  const views = await startViews(flags.views, { log: engineLog, anyPortIfTaken: true });
  const engine = await engineFromSettings(
    {
      ...flags.engine,
      stateDirectory: join(local.controlPlane.directory, "engine"),
      // The local backend runs the binaries the control plane runs.
      backendOptions: { assets: local.assetsDirectory, ...backendOptions },
    },
    local.controlPlane.kubeConfig,
    engineLog,
    process.env,
    { observers: views.observers, onLostLeadership: () => exitOnLost(engineLog, flags.engine) },
  );
  views.attach(engine);
  // The demo announces its first Clusters' files together, once all are Ready; any later one at once.
  let announce = !flags.demo;
  const kubeconfigs = keepAdminKubeconfigs(
    engine,
    join(dirname(flags.kubeconfigOut), "clusters"),
    (change) => {
      if (change.type === "failed")
        engineLog.warn("admin kubeconfig not written", { cluster: change.cluster, error: change.error });
      if (announce) console.log(describeKubeconfigChange(change));
    },
  );
  await engine.start();
  console.log(
    `  engine:      provider "${flags.engine.providerName}", backend ${flags.engine.backend}, log ${flags.log}`,
  );
  if (views.liveViewUrl) console.log(`  live view:   ${views.liveViewUrl}  (read-only, in a browser)`);
  if (views.inspectorUrl)
    console.log(
      `  inspector:   ${views.inspectorUrl}  (the Stately inspector; the page loads it from stately.ai)`,
    );
  return {
    engine,
    kubeconfigs,
    announceKubeconfigs: () => {
      announce = true;
    },
    stop: async () => {
      kubeconfigs.stop();
      // Like the local backend's clusters, the demo's kind clusters go with it (their node containers),
      // once the engine has stopped: a running engine would build them again for their Clusters.
      const made = flags.engine.backend === "kind" ? backendTargets(engine) : [];
      await engine.stop();
      await deleteBackendClusters(engine, made);
      await views.close();
      logFile.end();
    },
  };
}

/** The running demo: its live table and, for backends that trust OIDC issuers, its identity provider. */
interface Demo {
  readonly issuer: OidcIssuer | undefined;
  stop(): Promise<void>;
}

/**
 * Applies the demo's objects (and with Cluster API, examples/demo-capi), shows the Clusters live and, once
 * everything is Granted and Ready, what to try: the admin kubeconfigs and the AccessRequests' limited access.
 */
async function startDemo(
  flags: UpFlags,
  local: LocalControlPlane,
  { engine, kubeconfigs, announceKubeconfigs }: UpEngine,
  withCapi: boolean,
): Promise<Demo> {
  const { kubeConfig } = local.controlPlane;
  const created = await applyManifests(kubeConfig, flags.demoDir);
  console.log(`  demo:        applied ${created.join(", ")}\n`);
  const oidcDemo = join(flags.demoDir, "oidc");
  const issuer =
    engine.backend.capabilities.oidc && existsSync(oidcDemo)
      ? await startDemoIdentityProvider(engine, kubeConfig, oidcDemo)
      : undefined;
  const view = new LiveView(engine.informers.of(CACHES.clusters));
  view.start();
  if (withCapi) {
    const more = await applyManifests(kubeConfig, packageFile("examples/demo-capi"), {
      LOCAL_KUBERNETES_VERSION: await offeredVersion(engine, "local.local.demo"),
    });
    console.log(`  Cluster API: applied ${more.join(", ")}\n`);
    void showProvisioned(engine, join(dirname(flags.kubeconfigOut), "capi"));
  }
  const asked = created.filter((name) => name.startsWith("ClusterRequest/")).length;
  void clusterRequestsGranted(engine, asked)
    .then(() => view.allReady())
    .then(async (count) => {
      await kubeconfigs.settled();
      const written = [...kubeconfigs.files];
      console.log(`\nAll ${count} Clusters are Ready.`);
      for (const [cluster, file] of written)
        console.log(`  ${cluster}: kubectl --kubeconfig ${file} get namespaces`);
      announceKubeconfigs();
      const example =
        written[0]?.[0] ?? engine.informers.of(CACHES.clusters).list()[0]?.metadata.name ?? "<name>";
      console.log(
        `Change one and watch: ${local.kubectl} delete cluster -n demo ${example.split("/").at(-1)}\n`,
      );
      await showGrantedAccess(engine, join(dirname(flags.kubeconfigOut), "access"), issuer);
    });
  return { issuer, stop: async () => view.stop() };
}

/** Waits for Ctrl-C (SIGINT) or SIGTERM, then runs `stops` one after the other (absent ones skipped). */
async function stopOnSignal(stops: ReadonlyArray<(() => Promise<void>) | undefined>): Promise<void> {
  // The child processes are unreferenced, so without this timer Node would exit right here.
  const keepAlive = setInterval(() => {}, 1 << 30);
  await untilSignal(async (signal) => {
    console.log(`\n${signal}: stopping the control plane`);
    clearInterval(keepAlive);
    for (const stop of stops) await stop?.();
  });
}

/** What the backend holds for every Cluster the engine knows (what `up` made). */
function backendTargets(engine: Engine): ClusterTarget[] {
  return engine.informers
    .of(CACHES.clusters)
    .list()
    .map((cluster) => clusterTarget(cluster, engine.informers.of(CACHES.profiles).get(cluster.spec.profile)));
}

/** Deletes these clusters at the backend. */
async function deleteBackendClusters(engine: Engine, targets: readonly ClusterTarget[]): Promise<void> {
  for (const target of targets) {
    console.log(`  deleting the backend's cluster of ${target.namespace}/${target.name}`);
    await engine.backend.delete(target).catch((error: unknown) => {
      console.log(`  could not delete it: ${(error as Error).message}`);
    });
  }
}

/** The newest version profile `name` offers, once the engine has made the profile (the demo's version). */
async function offeredVersion(engine: Engine, name: string): Promise<string> {
  for (let i = 0; i < 300; i++) {
    const version = engine.informers.of(CACHES.profiles).get(name)?.spec.supportedVersions[0]?.version;
    if (version) return version;
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
  throw new Error(`ClusterProfile ${name} did not appear within 30 s`);
}

/**
 * Once Cluster API's own controller moves a CAPI Cluster to Provisioned (on an EngineCluster) or calls it
 * Available (on an EngineControlPlane), says so with the endpoint and writes the kubeconfig of its
 * `<cluster>-kubeconfig` Secret to `folder` (a demo convenience).
 */
async function showProvisioned(engine: Engine, folder: string): Promise<void> {
  const clusters = engine.informers.of(CACHES.capiClusters);
  const secrets = [
    engine.informers.of(CACHES.kubeconfigSecrets),
    engine.informers.of(CONTROL_PLANE_CACHES.kubeconfigSecrets),
  ];
  const done = new Set<string>();
  for (let i = 0; i < 1_500; i++) {
    for (const cluster of clusters.list()) {
      const key = objectKey(cluster);
      const managed = cluster.spec?.controlPlaneRef?.kind === "EngineControlPlane";
      const available = cluster.status?.conditions?.some(
        (c) => c.type === "Available" && c.status === "True",
      );
      if (done.has(key) || (managed ? !available : cluster.status?.phase !== "Provisioned")) continue;
      const secret = secrets
        .map((cache) => cache.get(`${key}-kubeconfig`))
        .find((found) => found?.data?.value);
      if (!secret?.data?.value) continue;
      done.add(key);
      await mkdir(folder, { recursive: true });
      const file = join(folder, `${cluster.metadata.namespace}.${cluster.metadata.name}.kubeconfig`);
      await writeFile(file, Buffer.from(secret.data.value, "base64").toString("utf8"), { mode: 0o600 });
      const endpoint = cluster.spec?.controlPlaneEndpoint;
      console.log(
        managed
          ? `\nCluster API Cluster ${key} is Available (its EngineControlPlane's; condition computed by Cluster API) at ${endpoint?.host}:${endpoint?.port}.`
          : `\nCluster API Cluster ${key} is Provisioned (phase computed by Cluster API) at ${endpoint?.host}:${endpoint?.port}.`,
      );
      console.log(
        `  from Secret ${cluster.metadata.name}-kubeconfig: kubectl --kubeconfig ${file} get namespaces\n`,
      );
    }
    if (done.size > 0 && done.size === clusters.list().length) return;
    await new Promise((resolveWait) => setTimeout(resolveWait, 200));
  }
}

/**
 * Resolves once `count` ClusterRequests are Granted: the Clusters they asked for exist then. At once
 * with `--no-schedule`: this engine grants none (nor caches them), another scheduler may.
 */
async function clusterRequestsGranted(engine: Engine, count: number): Promise<void> {
  if (!engine.machines.has("ClusterRequest")) return;
  const requests = engine.informers.of(CACHES.clusterRequests);
  while (requests.list().filter((request) => request.status?.phase === "Granted").length < count) {
    await new Promise((resolveWait) => setTimeout(resolveWait, 200));
  }
}

/**
 * Runs the demo's identity provider on loopback: the demo ProviderConfig's clusters trust its CA, and the
 * OIDC AccessRequests of `directory` name it as their issuer (`${DEMO_OIDC_ISSUER}`). Without a checkout of
 * the repository (the identity provider is a stand-in the package does not ship) that part is skipped.
 */
async function startDemoIdentityProvider(
  engine: Engine,
  kubeConfig: KubeConfig,
  directory: string,
): Promise<OidcIssuer | undefined> {
  const standIns = await loadFromCheckout(
    "the OIDC part of the demo",
    () => import("../dev/up-stand-ins.ts"),
  ).catch((error: unknown) => {
    if (!(error instanceof CheckoutNeededError)) throw error;
    console.log(`  demo OIDC:   skipped; ${error.message}\n`);
    return undefined;
  });
  if (!standIns) return undefined;
  const issuer = await standIns.startOidcIssuer();
  await KubernetesObjectApi.makeApiClient(kubeConfig).patch(
    {
      apiVersion: ENGINE_API_VERSION,
      kind: "ProviderConfig",
      metadata: { name: "demo" },
      spec: { settings: { oidcCertificateAuthority: issuer.certificateAuthority } },
    },
    undefined,
    undefined,
    undefined,
    undefined,
    PatchStrategy.MergePatch,
  );
  // The trust is written when a request is granted: the engine must know the CA by then.
  while (
    engine.informers.of(CACHES.providerConfigs).get("demo")?.spec.settings?.oidcCertificateAuthority ===
    undefined
  ) {
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
  const created = await applyManifests(kubeConfig, directory, { DEMO_OIDC_ISSUER: issuer.url });
  console.log(`  demo OIDC:   identity provider ${issuer.url}; applied ${created.join(", ")}\n`);
  return issuer;
}

/**
 * Once the demo's AccessRequests are Granted, writes each Secret's kubeconfig to `folder` and prints
 * what it may and may not do: the limited access a requester gets (never an admin kubeconfig).
 */
async function showGrantedAccess(engine: Engine, folder: string, issuer?: OidcIssuer): Promise<void> {
  const requests = engine.informers.of(CACHES.accessRequests).list();
  if (requests.length === 0) return;
  for (
    let i = 0;
    i < 600 &&
    !requests.every(
      (r) => engine.informers.of(CACHES.accessRequests).get(objectKey(r))?.status?.phase === "Granted",
    );
    i++
  ) {
    await new Promise((resolveWait) => setTimeout(resolveWait, 200));
  }
  await mkdir(folder, { recursive: true });
  for (const request of requests) {
    const current = engine.informers.of(CACHES.accessRequests).get(objectKey(request));
    const secretName = current?.status?.secretRef?.name;
    const secret = secretName
      ? engine.informers.of(CACHES.accessSecrets).get(`${request.metadata.namespace}/${secretName}`)
      : undefined;
    const kubeconfig = secret?.data?.kubeconfig;
    if (current?.status?.phase !== "Granted" || !kubeconfig) {
      console.log(
        `AccessRequest ${request.metadata.namespace}/${request.metadata.name}: ${current?.status?.phase ?? "not granted yet"}`,
      );
      continue;
    }
    const file = join(folder, `${request.metadata.namespace}.${request.metadata.name}.kubeconfig`);
    await writeFile(file, Buffer.from(kubeconfig, "base64").toString("utf8"), { mode: 0o600 });
    const ref = current.spec.clusterRef;
    const cluster = ref ? `${ref.namespace}/${ref.name}` : "?";
    const oidc = current.spec.oidc;
    if (oidc) {
      if (!issuer) continue;
      // kubectl oidc-login would get alice's token from the identity provider; the demo mints one (1 h).
      const token = await issuer.token({
        audience: oidc.clientID,
        subject: "alice",
        groups: ["readers"],
        ttlSeconds: 3600,
      });
      const login = new KubeConfig();
      login.loadFromString(Buffer.from(kubeconfig, "base64").toString("utf8"));
      const server = login.getCurrentCluster();
      const asAlice = new KubeConfig();
      asAlice.loadFromOptions({
        clusters: [{ name: "cluster", server: server?.server ?? "", caData: server?.caData }],
        users: [{ name: "alice", token }],
        contexts: [{ name: "alice", cluster: "cluster", user: "alice" }],
        currentContext: "alice",
      });
      const aliceFile = join(
        folder,
        `${request.metadata.namespace}.${request.metadata.name}.alice.kubeconfig`,
      );
      await writeFile(aliceFile, kubeconfigYaml(asAlice), { mode: 0o600 });
      console.log(
        `AccessRequest ${request.metadata.namespace}/${request.metadata.name} (OIDC, ${oidc.issuer}) is Granted on Cluster ${cluster}; its oidc-login kubeconfig is ${file}. As alice of group readers, with a token of the demo identity provider:`,
      );
      console.log(`  allowed:   kubectl --kubeconfig ${aliceFile} -n team-a get configmaps`);
      console.log(`  forbidden: kubectl --kubeconfig ${aliceFile} -n team-a get secrets\n`);
      continue;
    }
    console.log(
      `AccessRequest ${request.metadata.namespace}/${request.metadata.name} is Granted on Cluster ${cluster}; its kubeconfig, from Secret ${secretName}:`,
    );
    console.log(`  allowed:   kubectl --kubeconfig ${file} get namespaces`);
    console.log(
      `  allowed:   kubectl --kubeconfig ${file} -n team-a create configmap hello --from-literal=a=b`,
    );
    console.log(`  forbidden: kubectl --kubeconfig ${file} -n team-a get secrets\n`);
  }
}

/** One line for the user about an admin kubeconfig kept by `up`. */
function describeKubeconfigChange(change: AdminKubeconfigChange): string {
  switch (change.type) {
    case "written":
      return `  Cluster ${change.cluster} is Ready: kubectl --kubeconfig ${change.file} get namespaces`;
    case "removed":
      return `  Cluster ${change.cluster} is gone: removed ${change.file}`;
    case "failed":
      return `  Cluster ${change.cluster} is Ready, but its admin kubeconfig could not be written: ${change.error}`;
  }
}

interface UpFlags {
  readonly kubeconfigOut: string;
  readonly crds: string;
  readonly assets: string | undefined;
  readonly controller: boolean;
  readonly demo: boolean;
  readonly demoDir: string;
  readonly log: string;
  readonly engine: ReturnType<typeof engineFlags>;
  readonly views: ViewFlags;
}

function parseFlags(args: string[]): UpFlags {
  const values = parseEngineArgs(args, upUsage, {
    "kubeconfig-out": { type: "string" },
    crds: { type: "string" },
    assets: { type: "string" },
    controller: { type: "boolean", default: true },
    demo: { type: "boolean", default: true },
    "demo-dir": { type: "string" },
    log: { type: "string" },
    ...viewFlagOptions,
  });
  const text = (name: string) => (typeof values[name] === "string" ? (values[name] as string) : undefined);
  // A demo on loopback: one replica, no probe ports to collide with anything, local clusters stop with it.
  const flags = engineFlags(values, upUsage, {
    providerName: "local",
    environment: "local",
    backend: "local",
    leaderElect: false,
    metricsAddress: "0",
    healthAddress: "0",
  });
  const withBackend =
    flags.backend === "local" && flags.backendOptions.stopOnClose === undefined
      ? { ...flags, backendOptions: { ...flags.backendOptions, stopOnClose: "true" } }
      : flags;
  const demoDir = resolve(text("demo-dir") ?? packageFile(`examples/demo-${withBackend.backend}`));
  // A demo folder may bring its scheduler configuration (scheduler/config.yaml), unless one is given.
  const demoScheduler = join(demoDir, "scheduler", "config.yaml");
  const engine =
    withBackend.schedule && withBackend.schedulerConfig === undefined && existsSync(demoScheduler)
      ? { ...withBackend, schedulerConfig: { file: demoScheduler } }
      : withBackend;
  return {
    kubeconfigOut: resolve(text("kubeconfig-out") ?? join(".state", "kubeconfig")),
    crds: resolve(text("crds") ?? packageFile("crds")),
    assets: text("assets"),
    controller: values.controller !== false,
    demo: values.demo !== false && values.controller !== false,
    demoDir,
    log: resolve(text("log") ?? join(".state", "engine.log")),
    engine,
    views: viewFlags(values, upUsage, { liveViewAddress: DEFAULT_LIVE_VIEW_ADDRESS }),
  };
}
