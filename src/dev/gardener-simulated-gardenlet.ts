/**
 * A SIMULATED gardenlet: plays the part of Gardener's gardenlet for the Shoots in a test garden. For each Shoot it
 * starts a real local control plane (the project's harness), stores the Shoot's client CA as the
 * `<shoot>.ca-client` InternalSecret and the cluster CA as the `<shoot>.ca-cluster` ConfigMap (what
 * gardener-apiserver's `adminkubeconfig` subresource reads), and moves the Shoot's status (last operation,
 * conditions, advertised addresses) as gardenlet would. It copies a Shoot's structured authentication ConfigMap
 * to its API server, and on deletion stops the control plane and removes the `gardener` finalizer. Hibernation as
 * gardenlet does it: a Shoot whose `spec.hibernation.enabled` turns true is reconciled (`Reconcile Processing`) and its
 * control plane stopped, data, certificates and port kept (gardenlet scales etcd and kube-apiserver to zero and keeps
 * their volumes), then `status.hibernated: true`; turned false, the same control plane starts again, then
 * `status.hibernated: false`. While hibernated its conditions are True with reason `ConditionNotChecked`, as Gardener's
 * care controller writes them, and its advertised addresses stay. Nothing here is
 * Gardener's code: only the API server the Shoots live in is. Used by the gardener backend's tests and its demo
 * (`npm start -- --backend gardener`).
 */
import "reflect-metadata";
import { createPrivateKey, webcrypto } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
} from "@kubernetes/client-node";
import * as x509 from "@peculiar/x509";
import { errorMessage, isNotFound } from "../api/error-message.ts";
import { type ControlPlane, startControlPlane } from "../controlplane/control-plane.ts";
import { writeFileAtomically } from "../util/atomic-file.ts";

const CORE = { group: "core.gardener.cloud", version: "v1beta1" } as const;
/** kube-apiserver's structured authentication configuration trusting no issuer (a Shoot without OIDC). */
const NO_ISSUERS = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: []\n";

/** The parts of a Shoot the simulated gardenlet reads. */
export interface Shoot {
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly generation?: number;
    readonly resourceVersion?: string;
    readonly deletionTimestamp?: string;
    readonly finalizers?: readonly string[];
    readonly labels?: Readonly<Record<string, string>>;
  };
  readonly spec: {
    readonly hibernation?: { readonly enabled?: boolean };
    readonly kubernetes?: {
      readonly kubeAPIServer?: { readonly structuredAuthentication?: { readonly configMapName?: string } };
    };
  };
  readonly status?: { readonly observedGeneration?: number; readonly hibernated?: boolean };
}
const FINALIZER = "gardener";
const merge = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

/** A merge patch of `body` onto `shoot`, as CustomObjectsApi takes it (for the object or its status). */
function shootPatch(shoot: Shoot, body: object) {
  return {
    ...CORE,
    namespace: shoot.metadata.namespace ?? "",
    plural: "shoots",
    name: shoot.metadata.name,
    body,
  };
}

/** How the simulated gardenlet behaves. */
export interface SimulatedGardenletOptions {
  /** The garden (admin access). */
  readonly kubeConfig: KubeConfig;
  /** How often it lists Shoots. Default 250 ms. */
  readonly intervalMs?: number;
  /** Shoots it leaves in `Create Processing` (e.g. to catch the engine mid-provisioning). */
  readonly hold?: (shoot: Shoot) => boolean;
  /** Shoots whose creation fails, with the description gardenlet reports. */
  readonly fail?: (shoot: Shoot) => string | undefined;
  /**
   * Another address of this host each Shoot's API server is reachable at and advertised with (e.g. the gateway
   * of kind's Docker network, so an engine in a Pod reaches it). Default: loopback only.
   */
  readonly reachableAt?: string;
}

/** One Shoot's simulated control plane. */
interface ShootPlane {
  readonly controlPlane: ControlPlane;
  readonly directory: string;
  authentication: string;
  /** Its processes are stopped for a hibernation (data, certificates and port kept). */
  asleep: boolean;
}

/** The simulated gardenlet; {@link SimulatedGardenlet.stop} ends it and every control plane it started. */
export class SimulatedGardenlet {
  readonly #options: SimulatedGardenletOptions;
  readonly #custom: CustomObjectsApi;
  readonly #core: CoreV1Api;
  /** By Shoot uid. */
  readonly #planes = new Map<string, Promise<ShootPlane>>();
  #running = true;
  readonly #loop: Promise<void>;
  /** How many passes over the Shoots it has made (tests wait for it to have looked). */
  passes = 0;
  /** Shoot control planes it started so far (tests check that the Shoots were real). */
  started = 0;
  /** What went wrong while reconciling Shoots (it tries again on the next pass), for a failing test to show. */
  readonly errors: string[] = [];

  constructor(options: SimulatedGardenletOptions) {
    this.#options = options;
    this.#custom = options.kubeConfig.makeApiClient(CustomObjectsApi);
    this.#core = options.kubeConfig.makeApiClient(CoreV1Api);
    this.#loop = this.#run();
  }

  /** Control planes running right now. */
  get controlPlanes(): number {
    return this.#planes.size;
  }

  async stop(): Promise<void> {
    this.#running = false;
    await this.#loop;
    for (const plane of this.#planes.values()) await stopPlane(await plane.catch(() => undefined));
    this.#planes.clear();
  }

  async #run(): Promise<void> {
    while (this.#running) {
      try {
        const list = (await this.#custom.listClusterCustomObject({ ...CORE, plural: "shoots" })) as {
          items: Shoot[];
        };
        await Promise.all(
          list.items.map((shoot) =>
            this.#reconcile(shoot).catch((error: unknown) => {
              this.errors.push(`${shoot.metadata.name}: ${errorMessage(error)}`);
            }),
          ),
        );
        await this.#stopPlanesOfGoneShoots(new Set(list.items.map((shoot) => shoot.metadata.uid ?? "")));
      } catch {
        // the garden may be stopping; try again
      }
      this.passes++;
      await sleep(this.#options.intervalMs ?? 250);
    }
  }

  /** A Shoot that went without this gardenlet seeing it deleted must not leave its control plane running. */
  async #stopPlanesOfGoneShoots(listed: ReadonlySet<string>): Promise<void> {
    for (const [uid, plane] of this.#planes) {
      if (listed.has(uid)) continue;
      this.#planes.delete(uid);
      await stopPlane(await plane.catch(() => undefined));
    }
  }

  async #reconcile(shoot: Shoot): Promise<void> {
    const uid = shoot.metadata.uid ?? "";
    const namespace = shoot.metadata.namespace ?? "";
    const name = shoot.metadata.name;
    if (shoot.metadata.deletionTimestamp) {
      const finalizers = [...(shoot.metadata.finalizers ?? [])];
      if (!finalizers.includes(FINALIZER)) return;
      await this.#status(shoot, {
        lastOperation: operation("Delete", "Processing", 50, "Deleting the control plane"),
      });
      const plane = this.#planes.get(uid);
      this.#planes.delete(uid);
      await stopPlane(await plane?.catch(() => undefined));
      await this.#deleteIgnoringAbsence(() =>
        this.#custom.deleteNamespacedCustomObject({
          ...CORE,
          namespace,
          plural: "internalsecrets",
          name: `${name}.ca-client`,
        }),
      );
      await this.#deleteIgnoringAbsence(() =>
        this.#core.deleteNamespacedConfigMap({ namespace, name: `${name}.ca-cluster` }),
      );
      // Gardener's FinalizerRemoval admission lets the finalizer go only after a successful Delete operation.
      await this.#status(shoot, {
        lastOperation: operation("Delete", "Succeeded", 100, "Deleted (simulated gardenlet)"),
      });
      await this.#patch(shoot, { metadata: { finalizers: finalizers.filter((f) => f !== FINALIZER) } });
      return;
    }
    if (!this.#planes.has(uid)) {
      const finalizers = [...(shoot.metadata.finalizers ?? [])];
      if (!finalizers.includes(FINALIZER)) {
        // The uid makes the patch fail on a newer Shoot of the same name: this Shoot may have gone since the list.
        await this.#patch(shoot, { metadata: { uid, finalizers: [...finalizers, FINALIZER] } });
      }
      await this.#status(shoot, {
        lastOperation: operation("Create", "Processing", 10, "Creating the control plane"),
      });
      const failure = this.#options.fail?.(shoot);
      if (failure) {
        await this.#status(shoot, {
          lastOperation: operation("Create", "Failed", 10, failure),
          lastErrors: [
            { description: `infrastructure: ${failure}`, lastUpdateTime: new Date().toISOString() },
          ],
        });
        const failed = Promise.reject(new Error(failure));
        failed.catch(() => {}); // read where it is awaited; never an unhandled rejection
        this.#planes.set(uid, failed);
        return;
      }
      if (this.#options.hold?.(shoot)) return;
      const plane = this.#startPlane(shoot);
      this.#planes.set(uid, plane);
      this.started++;
      await plane;
      await this.#reconcileStatus(shoot, "Create");
      return;
    }
    const plane = await this.#planes.get(uid)?.catch(() => undefined);
    if (!plane) return;
    await this.#syncAuthentication(shoot, plane);
    const asleep = shoot.spec.hibernation?.enabled === true;
    const caughtUp = (shoot.status?.observedGeneration ?? 0) >= (shoot.metadata.generation ?? 0);
    if (caughtUp && asleep === plane.asleep && (shoot.status?.hibernated ?? false) === asleep) return;
    if (asleep !== plane.asleep) {
      await this.#status(shoot, {
        lastOperation: operation(
          "Reconcile",
          "Processing",
          50,
          asleep ? "Hibernating the control plane" : "Waking up the control plane",
        ),
      });
      if (asleep) await plane.controlPlane.pause();
      else await plane.controlPlane.resume();
      plane.asleep = asleep;
    }
    await this.#reconcileStatus(shoot, "Reconcile");
  }

  async #startPlane(shoot: Shoot): Promise<ShootPlane> {
    const namespace = shoot.metadata.namespace ?? "";
    const name = shoot.metadata.name;
    const directory = await mkdtemp(join(tmpdir(), "simulated-shoot-"));
    const clientCa = await rsaCertificateAuthority(`ca-client ${namespace}/${name}`);
    const authentication = NO_ISSUERS;
    await writeFile(join(directory, "authentication.yaml"), authentication);
    const controlPlane = await startControlPlane({
      ...(this.#options.reachableAt ? { reachableAt: this.#options.reachableAt } : {}),
      extraClientCertificateAuthorities: clientCa.cert,
      extraApiServerArgs: [`--authentication-config=${join(directory, "authentication.yaml")}`],
    });
    const caCluster = controlPlane.kubeConfig.getCurrentCluster()?.caData ?? "";
    // As gardenlet's resource manager does on a real Shoot: the groups Gardener's admin kubeconfigs carry are admins.
    const rbac = controlPlane.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    for (const group of ["gardener.cloud:system:admins", "gardener.cloud:project:admins"]) {
      await rbac.createClusterRoleBinding({
        body: {
          metadata: { name: group },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
          subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: group }],
        },
      });
    }
    await this.#custom.createNamespacedCustomObject({
      ...CORE,
      namespace,
      plural: "internalsecrets",
      body: {
        apiVersion: "core.gardener.cloud/v1beta1",
        kind: "InternalSecret",
        metadata: { name: `${name}.ca-client` },
        type: "Opaque",
        data: { "ca.crt": b64(clientCa.cert), "ca.key": b64(clientCa.key) },
      },
    });
    await this.#core.createNamespacedConfigMap({
      namespace,
      body: {
        metadata: { name: `${name}.ca-cluster` },
        data: { "ca.crt": Buffer.from(caCluster, "base64").toString("utf8") },
      },
    });
    return { controlPlane, directory, authentication, asleep: false };
  }

  /**
   * gardenlet's report after a successful operation: API server up at its address, every condition True; for a
   * hibernated Shoot `hibernated: true`, its conditions True but not checked (as Gardener's care controller says).
   */
  async #reconcileStatus(shoot: Shoot, type: "Create" | "Reconcile"): Promise<void> {
    const plane = await this.#planes.get(shoot.metadata.uid ?? "");
    if (!plane) return;
    const now = new Date().toISOString();
    const server = plane.controlPlane.reachableServer ?? plane.controlPlane.server;
    const condition = (conditionType: string) => ({
      type: conditionType,
      status: "True",
      reason: plane.asleep ? "ConditionNotChecked" : "HealthyByGardenletSimulation",
      message: plane.asleep
        ? "Shoot cluster has been hibernated."
        : "simulated gardenlet: the control plane runs",
      lastTransitionTime: now,
      lastUpdateTime: now,
    });
    await this.#status(shoot, {
      observedGeneration: shoot.metadata.generation,
      hibernated: plane.asleep,
      technicalID: `shoot--${(shoot.metadata.namespace ?? "").replace(/^garden-/, "")}--${shoot.metadata.name}`,
      lastOperation: operation(type, "Succeeded", 100, `${type} succeeded (simulated gardenlet)`),
      lastErrors: null,
      conditions: [
        "APIServerAvailable",
        "ControlPlaneHealthy",
        "ObservabilityComponentsHealthy",
        "SystemComponentsHealthy",
      ].map(condition),
      advertisedAddresses: [
        { name: "external", url: server },
        { name: "internal", url: server },
      ],
    });
  }

  /** Copies the Shoot's structured authentication ConfigMap (or none) into its API server's configuration file. */
  async #syncAuthentication(shoot: Shoot, plane: ShootPlane): Promise<void> {
    const configMap = shoot.spec.kubernetes?.kubeAPIServer?.structuredAuthentication?.configMapName;
    let wanted = NO_ISSUERS;
    if (configMap) {
      try {
        const stored = await this.#core.readNamespacedConfigMap({
          namespace: shoot.metadata.namespace ?? "",
          name: configMap,
        });
        wanted = stored.data?.["config.yaml"] ?? wanted;
      } catch {
        return; // not there yet
      }
    }
    if (wanted === plane.authentication) return;
    await writeFileAtomically(join(plane.directory, "authentication.yaml"), wanted);
    plane.authentication = wanted;
  }

  async #status(shoot: Shoot, status: object): Promise<void> {
    await this.#custom.patchNamespacedCustomObjectStatus(shootPatch(shoot, { status }), merge);
  }

  async #patch(shoot: Shoot, body: object): Promise<void> {
    await this.#custom.patchNamespacedCustomObject(shootPatch(shoot, body), merge);
  }

  async #deleteIgnoringAbsence(call: () => Promise<unknown>): Promise<void> {
    try {
      await call();
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}

function operation(type: string, state: string, progress: number, description: string) {
  return { type, state, progress, description, lastUpdateTime: new Date().toISOString() };
}

async function stopPlane(plane: ShootPlane | undefined): Promise<void> {
  if (!plane) return;
  await plane.controlPlane.stop();
  await rm(plane.directory, { recursive: true, force: true });
}

function b64(text: string): string {
  return Buffer.from(text).toString("base64");
}

/**
 * A self-signed RSA CA, its key as PKCS#1 PEM (`RSA PRIVATE KEY`): the form Gardener's secrets utilities load a
 * Shoot's client CA in.
 */
async function rsaCertificateAuthority(commonName: string): Promise<{ cert: string; key: string }> {
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const algorithm = {
    name: "RSASSA-PKCS1-v1_5",
    hash: "SHA-256",
    publicExponent: new Uint8Array([1, 0, 1]),
    modulusLength: 2048,
  };
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, [
    "sign",
    "verify",
  ])) as webcrypto.CryptoKeyPair;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: `CN=${commonName}`,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 86_400_000),
    signingAlgorithm: algorithm,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", keys.privateKey));
  const key = createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" }).export({
    type: "pkcs1",
    format: "pem",
  });
  return { cert: cert.toString("pem"), key: key.toString() };
}
