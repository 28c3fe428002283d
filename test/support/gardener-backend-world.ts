/**
 * The `gardener` backend between two real API servers: a management one (our CRDs, one namespace) whose Secrets
 * it reads, and Gardener's own (gardener-apiserver) with the CloudProfile `local` and one project. Where the
 * gardener backend's heavy tests begin; the garden's kubeconfig Secret and any engine are the test's own.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CustomObjectsApi } from "@kubernetes/client-node";
import type { ControlPlane } from "../../src/controlplane/control-plane.ts";
import { type Garden, startGarden } from "../../src/dev/gardener-apiserver.ts";
import { findGardenerAssets } from "../../src/dev/gardener-assets.ts";
import {
  applyCloudProfile,
  type CloudProfileVersion,
  CORE,
  createProject,
} from "../../src/dev/gardener-garden-objects.ts";
import { createBackend, type GardenerBackend } from "../../src/providers/gardener.ts";
import type { Shoot } from "../../src/providers/gardener-shoot.ts";
import { apiSecretReader } from "../../src/runtime/api-server/secret-reader.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import { aBackendContext } from "./backend-context.ts";
import { startApiServerWith } from "./cluster-harness.ts";
import { readCustomObject } from "./maybe-absent.ts";

/** The two API servers, the project and the backend; `stop` ends them and removes the backend's state. */
export interface GardenerBackendWorld {
  readonly management: ControlPlane;
  /** Custom objects of the management API server. */
  readonly custom: CustomObjectsApi;
  readonly garden: Garden;
  /** Custom objects of the garden (Shoots, CloudProfiles, …). */
  readonly gardenApi: CustomObjectsApi;
  /** The project's namespace in the garden, `garden-<project>`: where the Shoots are. */
  readonly projectNamespace: string;
  readonly backend: GardenerBackend;
  /** What the backend logged; a test's engine may log here too. */
  readonly logLines: string[];
  /** The Shoot `name` of the project, or undefined when there is none. */
  readShoot(name: string): Promise<Shoot | undefined>;
  stop(): Promise<void>;
}

/**
 * Starts both API servers (gardener-apiserver built once per machine first), creates `namespace` on the
 * management one, the CloudProfile `local` offering `versions` and the project `project` in the garden, and the
 * backend on a fresh state folder reading Secrets from the management API server.
 */
export async function startGardenerBackendWorld(props: {
  readonly namespace: string;
  readonly project: string;
  readonly versions: readonly CloudProfileVersion[];
}): Promise<GardenerBackendWorld> {
  findGardenerAssets(); // builds gardener-apiserver once per machine (hack/gardener/build.sh)
  const started = await Promise.allSettled([startApiServerWith(props.namespace), startGarden()]);
  const stateDirectory = mkdtempSync(join(tmpdir(), `${props.namespace}-`));
  const [apiServer, gardenStart] = started;
  // Whichever started is stopped, also when the other or a later step failed.
  const stop = async () => {
    await Promise.all([
      apiServer.status === "fulfilled" ? apiServer.value.controlPlane.stop() : undefined,
      gardenStart.status === "fulfilled" ? gardenStart.value.stop() : undefined,
    ]);
    rmSync(stateDirectory, { recursive: true, force: true });
  };
  try {
    if (apiServer.status === "rejected") throw apiServer.reason;
    if (gardenStart.status === "rejected") throw gardenStart.reason;
    const { controlPlane: management, custom } = apiServer.value;
    const garden = gardenStart.value;
    const gardenApi = garden.kubeConfig.makeApiClient(CustomObjectsApi);
    await applyCloudProfile(garden.kubeConfig, "local", props.versions);
    const projectNamespace = await createProject(garden.kubeConfig, props.project);
    const logLines: string[] = [];
    const backend = (await createBackend(
      aBackendContext(
        stateDirectory,
        {},
        {
          log: createLogger({ write: (line) => logLines.push(line) }),
          readSecret: apiSecretReader(management.kubeConfig),
        },
      ),
    )) as GardenerBackend;
    return {
      management,
      custom,
      garden,
      gardenApi,
      projectNamespace,
      backend,
      logLines,
      readShoot: (name) =>
        readCustomObject<Shoot>(gardenApi, { ...CORE, plural: "shoots" }, projectNamespace, name),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
