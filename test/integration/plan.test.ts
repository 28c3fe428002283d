/**
 * `openmcp-engine plan` on a real API server with the simulated backend: it writes nothing (every resourceVersion
 * stays, the API server's `apiserver_request_total` counts no write, the backend gets no command), it says what
 * would change with the exit code a pipeline gates on, and what it predicts is what the engine then writes (its
 * PATCH requests, recorded where they leave the engine) and calls at the backend when the changes are applied.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../src/api/backend.ts";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import { ACCESS_REQUEST_LABELS } from "../../src/api/constants/access-request.ts";
import { CLUSTER_LABELS } from "../../src/api/constants/cluster.ts";
import { LABELS, RESOURCES } from "../../src/api/constants.ts";
import { formatPlan, PLAN_EXIT, planCommand } from "../../src/cli/plan.ts";
import { UsageError } from "../../src/cli/usage-error.ts";
import { applied, type PatchOperation } from "../../src/machines/shared/json-patch.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { interceptRequests } from "../../src/runtime/api-server/connection-reuse.ts";
import { Engine } from "../../src/runtime/engine.ts";
import { buildingKindsTimed } from "../../src/runtime/kinds/registry.ts";
import type { Plan } from "../../src/runtime/plan/plan.ts";
import { apiServerRequestCounts } from "../support/api-server-requests.ts";
import { startPlanWorld, stopPlanWorld } from "../support/plan-world.ts";
import { expectRefused, runEngineCli } from "../support/processes.ts";
import { FAST_TIMING, isReady, type World } from "../support/world.ts";

let world: World;
let state: string;
/** `plan`'s flags for this world: its API server, provider and the simulated backend's state. */
let engineArgs: string[];

beforeAll(async () => {
  ({ world, state, engineArgs } = await startPlanWorld(
    "plan-",
    (folder) => ({
      engine: false,
      backend: new SimulatedBackend({
        stateDirectory: join(folder, "simulated"),
        provisionDelayMs: 0,
        updateDelayMs: 0,
        deleteDelayMs: 0,
      }),
    }),
    "--backend-option",
    "delay=0s",
  ));
});

afterAll(() => stopPlanWorld({ world, state }));

/** What happened to one Cluster, in order: a write (by part) or a backend command; `look` ends a step's commands. */
type Happening =
  | { readonly write: "object" | "status"; readonly operations: readonly PatchOperation[] }
  | { readonly command: string; readonly version?: string }
  | { readonly look: true };

/**
 * An engine of this test's own over the world, recording every PATCH of a Cluster as it leaves the engine (an
 * interceptor on its requests) and every backend command, into one timeline per Cluster.
 */
async function recordedEngine(timelines: Map<string, Happening[]>) {
  const into = (key: string, happening: Happening) =>
    timelines.set(key, [...(timelines.get(key) ?? []), happening]);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(world.controlPlane.kubeconfigPath);
  const backend = new Proxy(world.backend, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== "function" || typeof property !== "string") return value;
      return (...args: unknown[]) => {
        const about = args[0] as ClusterTarget;
        const key = `${about?.namespace}/${about?.name}`;
        if (property === "observe") into(key, { look: true });
        if (["create", "update", "delete", "hibernate", "wake"].includes(property))
          into(key, { command: property, ...(typeof args[1] === "string" ? { version: args[1] } : {}) });
        return value.apply(target, args);
      };
    },
  }) as ClusterBackend;
  const engine = new Engine({
    kubeConfig,
    providerName: world.provider,
    environment: "test",
    backend,
    kindSettings: buildingKindsTimed(FAST_TIMING),
  });
  interceptRequests(kubeConfig, (dispatch) => (options, handler) => {
    const cluster = /\/namespaces\/([^/]+)\/clusters\/([^/?]+)(\/status)?/.exec(options.path);
    const sent = options as { body?: AsyncIterable<Uint8Array | string> };
    const body = sent.body;
    if (options.method === "PATCH" && cluster && body) {
      // The body streams out as it is sent: passed on chunk by chunk, recorded once whole (before the answer).
      sent.body = (async function* () {
        const chunks: Buffer[] = [];
        for await (const chunk of body) {
          chunks.push(Buffer.from(chunk));
          yield chunk;
        }
        // The runtime's guard (`test` of the resourceVersion) first, then the step's operations.
        const [, ...operations] = JSON.parse(Buffer.concat(chunks).toString("utf8")) as PatchOperation[];
        into(`${cluster[1]}/${cluster[2]}`, { write: cluster[3] ? "status" : "object", operations });
      })();
    }
    return dispatch(options, handler);
  });
  await engine.start();
  return engine;
}

/** Every write request the API server has counted (`apiserver_request_total`), but its own Lease renewals. */
async function writeRequests(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const { labels, count } of await apiServerRequestCounts(world.controlPlane.kubeConfig)) {
    const verb = /verb="([^"]*)"/.exec(labels)?.[1] ?? "";
    const resource = /resource="([^"]*)"/.exec(labels)?.[1] ?? "";
    if (["GET", "LIST", "WATCH"].includes(verb) || resource === "leases") continue;
    const key = `${verb} ${resource}`;
    counts[key] = (counts[key] ?? 0) + count;
  }
  return counts;
}

/** Every object of ours: kind/namespace/name → resourceVersion. */
async function resourceVersions(): Promise<Record<string, string>> {
  const versions: Record<string, string> = {};
  for (const kind of [
    "Cluster",
    "ClusterProfile",
    "ProviderConfig",
    "AccessRequest",
    "ClusterRequest",
  ] as const) {
    const list = (await world.custom.listClusterCustomObject(RESOURCES[kind])) as {
      items: Array<{ metadata: { namespace?: string; name: string; resourceVersion: string } }>;
    };
    for (const item of list.items)
      versions[`${kind}/${item.metadata.namespace ?? ""}/${item.metadata.name}`] =
        item.metadata.resourceVersion;
  }
  return versions;
}

/** Runs `plan` as the CLI does; its output, parsed (`-o json`), and its exit code. */
async function planned(args: string[]): Promise<{ plan: Plan; exitCode: number }> {
  let output = "";
  const before = process.exitCode;
  try {
    await planCommand([...args, ...engineArgs, "-o", "json"], (text) => {
      output += text;
    });
    return { plan: JSON.parse(output) as Plan, exitCode: Number(process.exitCode ?? 0) };
  } finally {
    process.exitCode = before;
  }
}

/** A Cluster manifest of the world's profile. */
function clusterManifest(name: string, version: string): Cluster {
  return {
    apiVersion: "clusters.openmcp.cloud/v1alpha1",
    kind: "Cluster",
    metadata: { name, namespace: world.namespace },
    spec: { profile: world.profile, tenancy: "Exclusive", kubernetes: { version } },
  };
}

/** Times (RFC 3339) as "<time>": a plan and the engine take their steps at different instants. */
const timeless = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value).replace(/"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"/g, '"<time>"'));

/** Whether a status has preparation's Prepared condition, True. */
const preparedIn = (status: unknown): boolean =>
  ((status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []).some(
    (condition) => condition.type === "Prepared" && condition.status === "True",
  );

/** A status without times, its conditions sorted by type (their order is the order of the writes). */
const byConditionType = (status: unknown): unknown => {
  const { conditions = [], ...rest } = (status ?? {}) as { conditions?: Array<{ type: string }> };
  return timeless({ ...rest, conditions: [...conditions].sort((a, b) => a.type.localeCompare(b.type)) });
};

/** Writes and commands of a timeline up to its first step's commands; looks dropped. */
function untilCommandsDone(happenings: readonly Happening[]): Happening[] {
  const first = happenings.findIndex((happening) => "command" in happening);
  let end = first < 0 ? happenings.length : first;
  while (first >= 0 && end < happenings.length && "command" in (happenings[end] as Happening)) end++;
  return happenings.slice(0, end).filter((happening) => !("look" in happening));
}

describe("openmcp-engine plan", () => {
  it("writes nothing, says what would change (exit 2), and predicts what the engine then writes and calls", async () => {
    const settling = new Map<string, Happening[]>();
    const first = await recordedEngine(settling);
    await world.createCluster("web", { kubernetes: { version: "1.32.7" } });
    await world.createCluster("api");
    await world.waitFor("web", isReady);
    await world.waitFor("api", isReady);
    await first.stop();

    const changes = join(state, "changes.yaml");
    await writeFile(
      changes,
      [clusterManifest("web", "1.33.3"), clusterManifest("fresh", "1.33.3")]
        .map((manifest) => JSON.stringify(manifest))
        .join("\n---\n"),
    );
    const versionsBefore = await resourceVersions();
    const writesBefore = await writeRequests();
    // The count is kept: the engine's own writes of the Clusters so far are in it.
    expect(writesBefore["PATCH clusters"]).toBeGreaterThan(0);
    const callsBefore = world.calls.length;
    const { plan, exitCode } = await planned(["-f", changes, "--delete", `Cluster/${world.namespace}/api`]);

    // Nothing was written and nothing was commanded.
    expect(await resourceVersions()).toEqual(versionsBefore);
    expect(await writeRequests()).toEqual(writesBefore);
    expect(world.calls.slice(callsBefore).filter((call) => call.method !== "observe")).toEqual([]);
    expect(await world.readCluster("fresh")).toBeUndefined();

    expect(exitCode).toBe(PLAN_EXIT.changes);
    const ns = world.namespace;
    expect(plan.summary).toMatchObject({
      created: [`Cluster ${ns}/fresh`],
      updated: [`Cluster ${ns}/web`],
      deleted: [`Cluster ${ns}/api`],
      accessAffected: [],
      commands: 3,
    });
    // The same plan for a person.
    const text = formatPlan(plan);
    expect(text).toMatch(/^\+ Cluster clusters\/fresh {2}\(you: create\)$/m);
    expect(text).toMatch(/^- Cluster clusters\/api {2}\(you: delete\)$/m);
    expect(text).toMatch(/^ {6}command: update$/m);
    expect(text).toMatch(
      /^Plan: 1 created, 1 updated, 1 deleted, 0 access affected; 3 commands; 3 objects whose end/m,
    );
    const outcome = Object.fromEntries(plan.objects.map((object) => [object.name, object.outcome]));
    expect(outcome).toEqual({ web: "awaitsCommands", fresh: "awaitsCommands", api: "awaitsCommands" });

    // The changes, applied for real; the engine's writes and commands, recorded as they leave it.
    const timelines = new Map<string, Happening[]>();
    const web = (await world.readCluster("web")) as Cluster;
    await world.custom.replaceNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: ns,
      name: "web",
      body: { ...web, spec: { ...web.spec, kubernetes: { version: "1.33.3" } } },
    });
    await world.custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: ns,
      body: clusterManifest("fresh", "1.33.3"),
    });
    await world.remove(RESOURCES.Cluster, "api");
    const second = await recordedEngine(timelines);
    try {
      await world.waitFor("fresh", isReady);
      await world.waitFor("api", (cluster) => cluster === undefined);
      await world.waitFor(
        "web",
        (cluster) => isReady(cluster) && cluster?.metadata.labels?.[CLUSTER_LABELS.k8sVersion] === "1.33.3",
      );
    } finally {
      await second.stop();
    }
    for (const object of plan.objects) {
      const predicted = object.steps.flatMap((step) => [
        ...step.writes.map((write) => ({ write: write.part, operations: write.operations })),
        ...step.commands.map(({ command }) => {
          const { kind, version } = command as { kind: string; version?: string };
          return { command: kind, ...(version ? { version } : {}) };
        }),
      ]);
      const actual = untilCommandsDone(timelines.get(`${ns}/${object.name}`) ?? []);
      expect(predicted.length, `Cluster ${object.name}`).toBeGreaterThan(0);
      expect(timeless(actual), `Cluster ${object.name}`).toEqual(timeless(predicted));
    }
  });

  it("plans a new AccessRequest's preparation and answer, and the engine ends where the plan said", async () => {
    const ns = world.namespace;
    const request = {
      apiVersion: "clusters.openmcp.cloud/v1alpha1",
      kind: "AccessRequest",
      metadata: { name: "viewer", namespace: ns },
      spec: {
        clusterRef: { name: "web", namespace: ns },
        token: { permissions: [{ rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }] }] },
      },
    };
    const file = join(state, "access.yaml");
    await writeFile(file, JSON.stringify(request));
    const { plan, exitCode } = await planned(["-f", file]);
    expect(exitCode).toBe(PLAN_EXIT.changes);
    expect(plan.summary.accessAffected).toEqual([`AccessRequest ${ns}/viewer`]);
    const [viewer] = plan.objects;
    expect(viewer).toMatchObject({
      kind: "AccessRequest",
      name: "viewer",
      change: "create",
      outcome: "settled",
    });
    // Preparation first (labels, Pending), then the AccessRequest's machine (the simulated backend gives no access).
    expect(viewer?.steps.map((step) => step.by ?? `${step.from} → ${step.to}`)[0]).toBe("preparation");
    expect(viewer?.steps.length).toBeGreaterThan(1);
    const predicted = (viewer?.steps ?? [])
      .flatMap((step) => step.writes)
      .reduce<Record<string, unknown>>((object, write) => applied(object, write.operations), {
        ...request,
        metadata: { ...request.metadata },
      }) as { metadata: { labels?: unknown; finalizers?: unknown }; status?: unknown };
    expect(await world.read(RESOURCES.AccessRequest, "viewer")).toBeUndefined();

    await world.custom.createNamespacedCustomObject({
      ...RESOURCES.AccessRequest,
      namespace: ns,
      body: request,
    });
    const engine = await recordedEngine(new Map());
    let stored: { metadata: { labels?: unknown; finalizers?: unknown }; status?: unknown } | undefined;
    try {
      // Settled where the plan said: its phase, and then nothing more written for a while.
      const phase = (predicted.status as { phase?: string } | undefined)?.phase;
      expect(phase).toBe("Denied");
      await world.waitForObject(
        RESOURCES.AccessRequest,
        "viewer",
        (object: typeof stored) =>
          (object?.status as { phase?: string } | undefined)?.phase === phase && preparedIn(object?.status),
        { timeoutMs: 20_000 },
      );
      await sleep(1_000);
      stored = await world.read(RESOURCES.AccessRequest, "viewer");
    } finally {
      await engine.stop();
    }
    expect(timeless(stored?.metadata.labels)).toEqual(timeless(predicted.metadata.labels));
    expect(stored?.metadata.finalizers).toEqual(predicted.metadata.finalizers);
    // Two controllers race here: preparation writes the labels, then its Prepared condition; the machine, woken by
    // the labels, writes its answer. The plan takes one order (preparation's two writes, then the machine); when the
    // machine writes first, preparation's status write conflicts and its retry says the condition then. The
    // conditions' order follows the order of the writes: compared by type.
    expect(byConditionType(stored?.status)).toEqual(byConditionType(predicted.status));
  });

  it("gives a prepared AccessRequest whose Prepared condition was lost its condition, leaving the machine's answer", async () => {
    const ns = world.namespace;
    // As preparation's first write leaves it (labels, clusterRef), its status write lost to the machine's.
    await world.custom.createNamespacedCustomObject({
      ...RESOURCES.AccessRequest,
      namespace: ns,
      body: {
        apiVersion: "clusters.openmcp.cloud/v1alpha1",
        kind: "AccessRequest",
        metadata: {
          name: "lost",
          namespace: ns,
          labels: { [LABELS.provider]: world.provider, [ACCESS_REQUEST_LABELS.profile]: world.profile },
        },
        spec: {
          clusterRef: { name: "web", namespace: ns },
          token: { permissions: [{ rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }] }] },
        },
      },
    });
    const engine = await recordedEngine(new Map());
    try {
      const prepared = (await world.waitForObject(
        RESOURCES.AccessRequest,
        "lost",
        (object: { status?: { phase?: string } } | undefined) =>
          object?.status?.phase === "Denied" && preparedIn(object.status),
        { timeoutMs: 20_000 },
      )) as {
        status?: { phase?: string; conditions?: Array<{ type: string; status: string; message?: string }> };
      };
      expect(prepared.status?.phase).toBe("Denied");
      expect(prepared.status?.conditions?.find((c) => c.type === "Prepared")).toMatchObject({
        status: "True",
        message: `Cluster ${ns}/web, profile ${world.profile}, provider ${world.provider}`,
      });
    } finally {
      await engine.stop();
    }
  });

  it("exits 0 when nothing would change, 2 when something would, and 1 (not 2) for a bad change", async () => {
    const same = join(state, "same.yaml");
    const web = (await world.readCluster("web")) as Cluster;
    await writeFile(same, JSON.stringify({ ...web, status: undefined }));
    const { plan, exitCode } = await planned(["-f", same]);
    expect(exitCode).toBe(PLAN_EXIT.nothingChanges);
    expect(plan.changes).toBe(false);
    expect(plan.objects.map((object) => [object.name, object.change])).toEqual([["web", "none"]]);

    const refused = await planned(["--delete", "Gadget/x/y"]).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/plan does not know kind Gadget/);
    const usage = await planned([]).catch((error: unknown) => error);
    expect(usage).toBeInstanceOf(UsageError);
    expect((usage as UsageError).exitCode).toBe(PLAN_EXIT.error);

    // The same exit codes from the command itself.
    const nothing = runEngineCli("plan", "-f", same, ...engineArgs);
    expect(nothing.status).toBe(PLAN_EXIT.nothingChanges);
    expect(nothing.stdout).toMatch(/^= Cluster clusters\/web$/m);
    expect(nothing.stdout).toMatch(/^Plan: 0 created, 0 updated, 0 deleted, 0 access affected; 0 commands$/m);
    const deletion = runEngineCli(
      "plan",
      "--delete",
      `Cluster/${world.namespace}/web`,
      ...engineArgs,
      "-o",
      "json",
    );
    expect(deletion.status).toBe(PLAN_EXIT.changes);
    expect((JSON.parse(deletion.stdout) as Plan).summary.deleted).toEqual([`Cluster ${world.namespace}/web`]);
    expectRefused(
      runEngineCli("plan", "--delete", "Gadget/x/y", ...engineArgs),
      1,
      "plan does not know kind Gadget",
    );
    expectRefused(runEngineCli("plan", ...engineArgs), 1, "plan needs changes");
    expect(await world.readCluster("web")).toMatchObject({ metadata: { name: "web" } });
  });
});
