/** Our CRDs on a real API server: every example manifest is accepted, every invalid case is rejected with its message. */

import { type RequestOptions, request } from "node:https";
import { ApiException, type CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/api/common.ts";
import { RESOURCES, type ResourceKind } from "../../src/api/constants.ts";
import type { ControlPlane } from "../../src/controlplane/control-plane.ts";
import { INVALID_CASES, type InvalidCase } from "../fixtures/invalid-cases.ts";
import { FIXTURE_FILES, loadManifest } from "../fixtures/manifests.ts";
import { startApiServerWith } from "../support/cluster-harness.ts";

/** Namespace of every namespaced object this file creates. */
const NAMESPACE = "crd-validation";
/** Starting a control plane can take a while on a cold machine. */
const HOOK_TIMEOUT = 120_000;

let controlPlane: ControlPlane | undefined;
let customObjects: CustomObjectsApi;

beforeAll(async () => {
  ({ controlPlane, custom: customObjects } = await startApiServerWith(NAMESPACE));
}, HOOK_TIMEOUT);

afterAll(async () => {
  await controlPlane?.stop();
}, HOOK_TIMEOUT);

/** The served resource of an object's kind. */
function resourceOf(object: JsonObject): (typeof RESOURCES)[ResourceKind] {
  const kind = object.kind;
  if (typeof kind !== "string" || !Object.hasOwn(RESOURCES, kind)) {
    throw new Error(`Kind ${String(kind)} is not served by our CRDs; fix the fixture.`);
  }
  return RESOURCES[kind as ResourceKind];
}

/** The object's metadata as a plain record. */
function metadataOf(object: JsonObject): JsonObject {
  const metadata = object.metadata;
  return typeof metadata === "object" && metadata !== null && !Array.isArray(metadata)
    ? (metadata as JsonObject)
    : {};
}

/** The object moved into this file's namespace (when namespaced) and, if given, renamed. */
function placed(object: JsonObject, name?: string): JsonObject {
  const { namespaced } = resourceOf(object);
  const metadata = { ...metadataOf(object), ...(name === undefined ? {} : { name }) };
  return { ...object, metadata: namespaced ? { ...metadata, namespace: NAMESPACE } : metadata };
}

/** The object's name, which every write after a create needs. */
function nameOf(object: JsonObject): string {
  const name = metadataOf(object).name;
  if (typeof name !== "string") {
    throw new Error("The object has no metadata.name; the API server should have returned it.");
  }
  return name;
}

async function create(object: JsonObject): Promise<JsonObject> {
  const { group, version, plural, namespaced } = resourceOf(object);
  return namespaced
    ? customObjects.createNamespacedCustomObject({
        group,
        version,
        plural,
        namespace: NAMESPACE,
        body: object,
      })
    : customObjects.createClusterCustomObject({ group, version, plural, body: object });
}

/** Replaces the object, or with `status` only its status through the status subresource. */
async function replace(object: JsonObject, { status = false } = {}): Promise<JsonObject> {
  const { group, version, plural, namespaced } = resourceOf(object);
  const name = nameOf(object);
  if (namespaced) {
    const request = { group, version, plural, namespace: NAMESPACE, name, body: object };
    return status
      ? customObjects.replaceNamespacedCustomObjectStatus(request)
      : customObjects.replaceNamespacedCustomObject(request);
  }
  const request = { group, version, plural, name, body: object };
  return status
    ? customObjects.replaceClusterCustomObjectStatus(request)
    : customObjects.replaceClusterCustomObject(request);
}

/**
 * Runs a case up to its rejected write and returns that write.
 *
 * Flow: create cases write their object as is. Update cases create the initial object under `name`, then
 * replace it with the changed copy of what the API server returned. Status-update cases also write the
 * initial status through the status subresource first, then the changed status. Only the last write may fail.
 */
async function rejectedWrite(testCase: InvalidCase, name: string): Promise<JsonObject> {
  if ("create" in testCase) {
    return create(placed(testCase.create));
  }
  if ("update" in testCase) {
    const created = await create(placed(testCase.update.initial, name));
    return replace(testCase.update.change(created));
  }
  const { initial, change } = testCase.statusUpdate;
  const created = await create(placed(initial, name));
  const written = await replace({ ...created, status: initial.status ?? {} }, { status: true });
  return replace(change(written), { status: true });
}

/** What the API server answered to a failed write: the HTTP status and the message of its Status body. */
interface Rejection {
  readonly code: number;
  readonly message: string;
}

/** Awaits a write that must fail and returns how it failed. */
async function rejectionOf(write: Promise<unknown>): Promise<Rejection> {
  try {
    await write;
  } catch (error) {
    if (error instanceof ApiException) {
      return { code: error.code, message: statusMessage(error.body) };
    }
    throw error;
  }
  throw new Error("The API server accepted a write that should have been rejected.");
}

/** The `message` of a metav1.Status body (client-node hands it over as text), or the whole body. */
function statusMessage(body: unknown): string {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  try {
    const parsed: unknown = JSON.parse(text);
    if (
      typeof parsed === "object" &&
      parsed !== null &&
      "message" in parsed &&
      typeof parsed.message === "string"
    ) {
      return parsed.message;
    }
  } catch {
    // Not JSON: the raw text is the best message there is.
  }
  return text;
}

/** The parts of a meta.k8s.io/v1 Table this file reads. */
interface Table {
  readonly columnDefinitions: readonly { readonly name: string; readonly priority: number }[];
  readonly rows: readonly { readonly cells: readonly unknown[] }[];
}

/** Lists a resource the way kubectl does: as a server-side Table. */
async function serverTable(path: string): Promise<Table> {
  const kubeConfig = controlPlane?.kubeConfig;
  const server = kubeConfig?.getCurrentCluster()?.server;
  if (kubeConfig === undefined || server === undefined) {
    throw new Error("The control plane is not running; see the beforeAll failure.");
  }
  const options: RequestOptions = { headers: { Accept: "application/json;as=Table;v=v1;g=meta.k8s.io" } };
  await kubeConfig.applyToHTTPSOptions(options);
  const body = await new Promise<string>((resolve, reject) => {
    const call = request(new URL(path, server), options, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        text += chunk;
      });
      response.on("end", () =>
        response.statusCode === 200
          ? resolve(text)
          : reject(new Error(`GET ${path} answered ${response.statusCode}: ${text}`)),
      );
    });
    call.on("error", reject);
    call.end();
  });
  return JSON.parse(body) as Table;
}

/** The columns `kubectl get` shows for each kind (priority 0) and those only `-o wide` adds. */
const PRINTER_COLUMNS: readonly {
  readonly kind: ResourceKind;
  readonly normal: readonly string[];
  readonly wide: readonly string[];
}[] = [
  {
    kind: "Cluster",
    normal: ["Name", "Purposes", "Phase", "Version", "Provider", "Age"],
    wide: ["Profile", "Info", "APIServer"],
  },
  { kind: "ClusterProfile", normal: ["Name", "Provider", "Config"], wide: [] },
  { kind: "ClusterRequest", normal: ["Name", "Purpose", "Phase", "Cluster", "Cluster-NS"], wide: [] },
  { kind: "AccessRequest", normal: ["Name", "Phase"], wide: [] },
  { kind: "ProviderConfig", normal: ["Name", "Provider", "Backend", "Profile", "Age"], wide: [] },
  { kind: "Purpose", normal: ["Name", "Dedicated", "Traits", "Age"], wide: [] },
  { kind: "ClusterRequestGrant", normal: ["Name", "Cluster", "Cluster-NS", "Prefix", "Age"], wide: [] },
];

describe("the CRDs on a real API server", () => {
  it.each(FIXTURE_FILES)("accept the example manifest %s as written", async (file) => {
    const manifest = placed(loadManifest(file));

    const created = await create(manifest);

    expect(created).toMatchObject({ kind: manifest.kind, spec: manifest.spec });
  });

  it.each(INVALID_CASES.map((testCase, index) => ({ ...testCase, index })))("$name", async (testCase) => {
    const rejection = await rejectionOf(rejectedWrite(testCase, `invalid-${testCase.index}`));

    expect(rejection.code).toBe(422);
    expect(rejection.message).toContain(testCase.expectMessage);
  });
});

describe("the tables kubectl shows", () => {
  it.each(PRINTER_COLUMNS)("list $kind with the upstream columns", async ({ kind, normal, wide }) => {
    const { group, version, plural } = RESOURCES[kind];

    const table = await serverTable(`/apis/${group}/${version}/${plural}`);

    const columns = table.columnDefinitions;
    expect(columns.filter((column) => column.priority === 0).map((column) => column.name)).toEqual(normal);
    expect(columns.filter((column) => column.priority > 0).map((column) => column.name)).toEqual(wide);
  });

  it("fill the Purpose columns, Traits with the wishes as written", async () => {
    const purpose = loadManifest("purpose.yaml");
    await create(placed(purpose, "table-purpose"));

    const { group, version, plural } = RESOURCES.Purpose;
    const table = await serverTable(`/apis/${group}/${version}/${plural}/table-purpose`);

    const cell = (name: string) =>
      table.rows[0]?.cells[table.columnDefinitions.findIndex((column) => column.name === name)];
    expect(cell("Dedicated")).toBe(true);
    expect(JSON.parse(String(cell("Traits")))).toEqual((purpose.spec as JsonObject).traits);
  });

  it("fill the ClusterRequestGrant columns from its spec", async () => {
    await create(placed(loadManifest("cluster-request-grant.yaml"), "table-grant"));

    const { group, version, plural } = RESOURCES.ClusterRequestGrant;
    const table = await serverTable(
      `/apis/${group}/${version}/namespaces/${NAMESPACE}/${plural}/table-grant`,
    );

    const cell = (name: string) =>
      table.rows[0]?.cells[table.columnDefinitions.findIndex((column) => column.name === name)];
    expect([cell("Cluster"), cell("Cluster-NS"), cell("Prefix")]).toEqual([
      "my-cluster",
      "my-namespace",
      "mr",
    ]);
  });

  it("fill the Cluster columns from the provider's labels and annotation", async () => {
    await create(placed(loadManifest("cluster.yaml"), "table-cluster"));

    const table = await serverTable(
      `/apis/${RESOURCES.Cluster.group}/${RESOURCES.Cluster.version}/namespaces/${NAMESPACE}/${RESOURCES.Cluster.plural}/table-cluster`,
    );

    const cell = (name: string) =>
      table.rows[0]?.cells[table.columnDefinitions.findIndex((column) => column.name === name)];
    expect([cell("Version"), cell("Provider"), cell("Profile"), cell("Info")]).toEqual([
      "1.31.11",
      "gardener",
      "default.myprovider.myprofile",
      "foobar",
    ]);
  });
});
