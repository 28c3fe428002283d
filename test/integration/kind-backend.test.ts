/**
 * The kind backend driving a fake `kind` executable (real child processes, no Docker, no API server): the
 * failure paths real kind cannot be made to take on demand (a failed or killed create, kind's error output),
 * fast. Real kind clusters on a real Docker engine: kind-clusters, kind-restart and the conformance kit.
 */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ClusterObservation, ClusterTarget } from "../../src/api/backend.ts";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import { poolMemberTarget } from "../../src/api/cluster-pool.ts";
import type { JsonObject } from "../../src/api/common.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";
import { checkPoolConformance } from "../../src/providers/conformance-pools.ts";
import { kindNodeImage } from "../../src/providers/kind/cluster-config.ts";
import { createBackend } from "../../src/providers/kind/index.ts";
import { METALLB_IMAGES } from "../../src/providers/kind/metallb.ts";
import { KIND_NAME_ANNOTATION, kindClusterName, kindClusterNameOf } from "../../src/providers/kind/names.ts";
import { KIND_DEFAULT_VERSIONS, kindAccess } from "../../src/providers/kind/settings.ts";
import { redact } from "../../src/providers/kind/stderr.ts";
import { loadBackendFactory } from "../../src/providers/registry.ts";
import { systemClock } from "../../src/runtime/clock.ts";
import { silentLogger } from "../../src/runtime/logger.ts";
import { aBackendContext } from "../support/backend-context.ts";
import { aClusterTarget, aProviderConfig } from "../support/builders.ts";
import { type FakeKind, installFakeKind } from "../support/fake-kind.ts";
import { observationWhere } from "../support/observation-where.ts";
import { budget } from "../support/pace.ts";
import { isAlive } from "../support/processes.ts";

let fake: FakeKind;
let stateDirectory: string;

beforeEach(() => {
  fake = installFakeKind({ createDelayMs: 300 });
  stateDirectory = mkdtempSync(join(tmpdir(), "kind-backend-"));
});
afterEach(async () => {
  // Whatever a test left running: stop it through the backend, which knows the pids.
  const backend = await newBackend();
  for (const cluster of fake.clusters()) fake.removeCluster(cluster.name);
  for (const folder of readdirSync(join(stateDirectory, "clusters"))) {
    const file = join(stateDirectory, "clusters", folder, "record.json");
    if (existsSync(file)) await backend.delete(target({ uid: JSON.parse(readFileSync(file, "utf8")).uid }));
  }
  fake.remove();
  rmSync(stateDirectory, { recursive: true, force: true });
});

function newBackend(
  options: Record<string, string> = {},
  directory = stateDirectory,
): Promise<ClusterBackend> {
  return Promise.resolve(
    createBackend(
      // The fake kind makes no containers: the state folder's authn/ (folder mode) stands in for the node's.
      aBackendContext(directory, { kind: fake.path, docker: "/bin/false", authn: "folder", ...options }),
    ),
  );
}

function target(overrides: Partial<ClusterTarget> = {}): ClusterTarget {
  return aClusterTarget({
    uid: "6f1c2e9a-4b7d-4e21-9c3a-0d5e8f7a1b2c",
    profile: "default.kind-provider.kind",
    providerConfig: "kind",
    ...overrides,
  });
}

function config(spec: Partial<ProviderConfig["spec"]> = {}): ProviderConfig {
  return aProviderConfig({ name: "kind", backend: "kind", ...spec });
}

/** The backend's observation of `cluster` once `done` holds. */
const until = (backend: ClusterBackend, cluster: ClusterTarget, done: (o: ClusterObservation) => boolean) =>
  observationWhere(backend, cluster, done, { timeoutMs: 15_000, intervalMs: 50 });

/** A create that takes 5 s, started: the backend, its cluster and the pid of `kind create cluster` (from its record). */
async function slowCreateStarted() {
  fake.configure({ createDelayMs: 5_000 });
  const backend = await newBackend();
  const cluster = target();
  await backend.create(cluster, "1.34.0");
  const folder = join(stateDirectory, "clusters", kindClusterNameOf(cluster.name, cluster.uid));
  const { pid } = JSON.parse(readFileSync(join(folder, "record.json"), "utf8")) as { pid: number };
  return { backend, cluster, pid };
}

const phase = (observation: ClusterObservation) => (observation.exists ? observation.phase : "absent");
const creates = () => fake.calls().filter((args) => args[0] === "create");

describe("the kind backend", () => {
  it("is a built-in backend, and its factory refuses a missing kind executable with a clear message", async () => {
    expect(typeof (await loadBackendFactory("kind"))).toBe("function");
    const context = {
      stateDirectory,
      log: silentLogger,
      clock: systemClock,
      readSecret: async () => undefined,
    };
    await expect(
      createBackend({ ...context, options: { kind: join(stateDirectory, "no-kind") } }),
    ).rejects.toThrow(/no kind executable at .*no-kind; install kind .* or fix --backend-option kind=<path>/);
    await expect(
      createBackend({ ...context, options: { kind: "kind-that-is-not-installed" } }),
    ).rejects.toThrow(
      /"kind-that-is-not-installed" was not found on PATH; install kind .* or pass --backend-option kind=/,
    );
    await expect(createBackend({ ...context, options: { kind: fake.path, wait: "soon" } })).rejects.toThrow(
      /wait "soon" is not a duration/,
    );
  });

  it("offers the config's versions, else the node images Docker holds, else kind's published images; the config's traits", async () => {
    // A Docker CLI that cannot reach an engine: kind's published images, which kind would pull.
    const backend = await newBackend({ docker: "/bin/false" });
    expect(backend.supportedVersions(config())).toEqual(KIND_DEFAULT_VERSIONS);
    // One that lists node images: exactly those, newest first, other images and tags ignored.
    const docker = join(stateDirectory, "docker");
    writeFileSync(
      docker,
      '#!/bin/sh\nprintf "kindest/node:v1.35.1\\nkindest/node:v1.36.3\\nkindest/node:latest\\nkindest/haproxy:v2\\n"\n',
      { mode: 0o755 },
    );
    const withImages = await newBackend({ docker });
    expect(withImages.supportedVersions(config())).toEqual([{ version: "1.36.3" }, { version: "1.35.1" }]);
    // The offer is read again each time: an image loaded since is offered, unless it is of a release this kind
    // cannot create (the fake says v0.30, which writes kubeadm's v1beta3: 1.37 refuses it); a Docker that cannot
    // be asked is named.
    writeFileSync(
      docker,
      '#!/bin/sh\nprintf "kindest/node:v1.36.3\\nkindest/node:v1.36.4\\nkindest/node:v1.37.0\\n"\n',
    );
    expect((await withImages.readOffer?.(config()))?.versions).toEqual([
      { version: "1.36.4" },
      { version: "1.36.3" },
    ]);
    // kind's version is asked once per backend made (two here), not again for an offer.
    expect(fake.calls().filter((args) => args[0] === "version")).toHaveLength(2);
    writeFileSync(
      docker,
      '#!/bin/sh\necho "permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock" >&2\nexit 1\n',
    );
    await expect(withImages.readOffer?.(config())).rejects.toThrow(
      `kind backend: cannot list the kindest/node images (${docker} image ls: permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock); make the Docker socket usable by the engine, or list the versions in spec.supportedVersions`,
    );
    // A config that lists its versions needs no Docker.
    expect(
      (await withImages.readOffer?.(config({ supportedVersions: [{ version: "1.31.12" }] })))?.versions,
    ).toEqual([{ version: "1.31.12" }]);
    expect(backend.supportedVersions(config({ supportedVersions: [{ version: "1.31.12" }] }))).toEqual([
      { version: "1.31.12" },
    ]);
    expect(backend.traits(config({ traits: ["docker"] }))).toEqual(["docker"]);
    expect(backend.traits(config())).toEqual([]);
    expect(backend.capabilities).toEqual({ adminAccess: true, oidc: true });
  });

  it("names clusters as openMCP's kind provider does: the Cluster's name, a dot and its uid's first 8 characters, long names cut to fit kind's node hostnames", () => {
    const uid = "3f2a9c10-0000-4000-8000-000000000001";
    expect(kindClusterNameOf("mcp-abcdefgh", uid)).toBe("mcp-abcdefgh.3f2a9c10");
    expect(kindClusterNameOf("mcp-abcdefgh", "4e2a9c10-0000-4000-8000-000000000001")).not.toBe(
      kindClusterNameOf("mcp-abcdefgh", uid),
    );
    const long = kindClusterNameOf(`${"a".repeat(39)}-${"b".repeat(20)}`, uid);
    expect(long).toBe(`${"a".repeat(39)}.3f2a9c10`); // cut at 40, the trailing '-' dropped
    expect(`${long}-control-plane`.length).toBeLessThanOrEqual(63);
    // The engine's former names (pool members keep them): omc- and 12 hex digits of the uid's hash.
    expect(kindClusterName(uid)).toMatch(/^omc-[0-9a-f]{12}$/);
  });

  it("creates in the background, reports provisioning, then ready with the kubeconfig's server", async () => {
    const backend = await newBackend();
    const cluster = target();
    const name = kindClusterNameOf(cluster.name, cluster.uid);
    expect(await backend.observe(cluster)).toEqual({ exists: false });

    fake.configure({ createDelayMs: 3_000 });
    await backend.create(cluster, "1.34.0");
    // Returned before kind's create ended: the fake writes its cluster ready only at the end of the create.
    expect(fake.clusters().find((c) => c.name === name)?.ready).not.toBe(true);
    expect(phase(await backend.observe(cluster))).toBe("provisioning");
    expect(await backend.adminAccess(cluster)).toBeUndefined();

    const ready = await until(backend, cluster, (o) => phase(o) === "ready");
    const port = fake.clusters().find((c) => c.name === name)?.port;
    expect(ready).toEqual({
      exists: true,
      phase: "ready",
      version: "1.34.0",
      endpoint: `https://127.0.0.1:${port}`,
      internalEndpoint: `https://${name}-control-plane:6443`,
      info: `kind cluster ${name} (kindest/node:v1.34.0)`,
    });
    const folder = join(stateDirectory, "clusters", name);
    expect(creates()).toEqual([
      [
        "create",
        "cluster",
        "--name",
        name,
        "--image",
        "kindest/node:v1.34.0",
        "--config",
        join(folder, "kind-config.yaml"),
        "--kubeconfig",
        join(folder, "kubeconfig"),
        "--wait",
        "300s",
      ],
    ]);
    // The cluster's kube-apiserver reads its OIDC trust from the mounted authn/ folder, trusting none at first.
    expect(readFileSync(join(folder, "kind-config.yaml"), "utf8")).toContain(
      `hostPath: ${join(folder, "authn")}`,
    );
    expect(readFileSync(join(folder, "authn", "authentication.yaml"), "utf8")).toContain("jwt: []");
    // The only kind commands besides the create: listing clusters, reading the kubeconfig, and (once, at the
    // start) its version, which bounds the node images offered.
    const kinds = new Set(fake.calls().map((args) => args.slice(0, 2).join(" ")));
    expect([...kinds].sort()).toEqual(["create cluster", "get clusters", "get kubeconfig", "version"]);
    expect(fake.calls()).toContainEqual(["get", "kubeconfig", "--name", name]);
    expect(JSON.stringify(ready)).not.toMatch(/data|BEGIN/);
  });

  it("takes node images from settings.images and the wait from --backend-option wait", async () => {
    const backend = await newBackend({ wait: "90s" });
    const settings: JsonObject = { images: { "1.33.4": "registry.example/kind-node:1.33.4@sha256:abc" } };
    await backend.create(target({ settings }), "1.33.4");
    await until(backend, target({ settings }), (o) => phase(o) === "ready");
    expect(creates()[0]).toEqual(
      expect.arrayContaining(["registry.example/kind-node:1.33.4@sha256:abc", "90s"]),
    );
    expect(kindNodeImage("1.32.8", settings)).toBe("kindest/node:v1.32.8");
    expect(() => kindNodeImage("1.32.8", { images: ["x"] }, "kind")).toThrow(
      /ProviderConfig kind: settings.images must map versions to node images/,
    );
    await expect(backend.create(target({ uid: "u2", settings: { images: "x" } }), "1.34.0")).rejects.toThrow(
      /settings.images must map versions/,
    );
  });

  it("starts one create per cluster: a second create while one runs, or after it, starts none", async () => {
    const backend = await newBackend();
    const cluster = target();
    await Promise.all([backend.create(cluster, "1.34.0"), backend.create(cluster, "1.34.0")]);
    await backend.create(cluster, "1.34.0");
    expect(phase(await backend.observe(cluster))).toBe("provisioning");
    await until(backend, cluster, (o) => phase(o) === "ready");
    await backend.create(cluster, "1.34.0");
    expect(creates()).toHaveLength(1);
    expect(fake.clusters()).toHaveLength(1);
  });

  it("runs at most parallelCreates creates at once: the others wait in order, say so, and start as slots free", async () => {
    // Long enough that the first create still runs while the three are ordered, on a loaded machine too.
    const createDelayMs = budget(4_000);
    fake.configure({ createDelayMs });
    const backend = await newBackend({ parallelCreates: "1" });
    const [first, second, third] = ["u-first", "u-second", "u-third"].map((uid) => target({ uid })) as [
      ClusterTarget,
      ClusterTarget,
      ClusterTarget,
    ];
    for (const cluster of [first, second, third]) await backend.create(cluster, "1.34.0");
    expect(creates()).toHaveLength(1);
    const waiting = await backend.observe(third);
    expect(waiting).toMatchObject({ exists: true, phase: "provisioning" });
    expect(waiting.exists && waiting.message).toMatch(
      /waiting to start: 1 kind create\(s\) run at once on this Docker host \(backend option parallelCreates\), 2 of 2 waiting/,
    );
    // A Cluster deleted while it waits is never created.
    await backend.delete(second);
    // The third starts once the first is done: two creates one after the other (the pace may have fallen since
    // the delay was set, so the wait is the two delays' own, not a paced constant).
    await observationWhere(backend, third, (o) => phase(o) === "ready", {
      timeoutMs: 2 * createDelayMs + 15_000,
      intervalMs: 50,
    });
    expect(phase(await backend.observe(first))).toBe("ready");
    expect(await backend.observe(second)).toEqual({ exists: false });
    expect(creates().map((args) => args[3])).toEqual([
      kindClusterNameOf(first.name, first.uid),
      kindClusterNameOf(third.name, third.uid),
    ]);
    // Queued by an engine that restarted: nothing started, so observed absent and created when ordered again.
    // The fourth's create is held while the engine starts anew (that start asks kind and Docker: seconds under load).
    fake.configure({ createsHeld: true });
    const fourth = target({ uid: "u-fourth" });
    const fifth = target({ uid: "u-fifth" });
    await backend.create(fourth, "1.34.0");
    await backend.create(fifth, "1.34.0");
    const restarted = await newBackend({ parallelCreates: "1" });
    expect(await restarted.observe(fifth)).toEqual({ exists: false });
    await restarted.create(fifth, "1.34.0");
    expect(phase(await restarted.observe(fifth))).toBe("provisioning");
    fake.configure({});
    await until(restarted, fifth, (o) => phase(o) === "ready");
    expect(creates().filter((args) => args[3] === kindClusterNameOf(fifth.name, fifth.uid))).toHaveLength(1);
    await expect(newBackend({ parallelCreates: "0" })).rejects.toThrow(
      'kind backend: parallelCreates "0" must be a whole number from 1 (e.g. 2)',
    );
  });

  it("a new instance on the same state folder adopts a running create and does not create again", async () => {
    fake.configure({ createsHeld: true }); // until the second instance has seen it running
    const first = await newBackend();
    const cluster = target();
    await first.create(cluster, "1.34.0");
    const record = JSON.parse(
      readFileSync(
        join(stateDirectory, "clusters", kindClusterNameOf(cluster.name, cluster.uid), "record.json"),
        "utf8",
      ),
    );
    expect(isAlive(record.pid)).toBe(true);

    const second = await newBackend(); // the controller restarted
    expect(phase(await second.observe(cluster))).toBe("provisioning");
    await second.create(cluster, "1.34.0");
    fake.configure({});
    const ready = await until(second, cluster, (o) => phase(o) === "ready");
    const third = await newBackend();
    expect(await third.observe(cluster)).toEqual(ready);
    await third.create(cluster, "1.34.0");
    expect(creates()).toHaveLength(1);
  });

  it("tries a failed create again after a growing wait (4 tries), telling the last failure meanwhile; then reports kind's ERROR line and what follows, redacted, until deleted", async () => {
    fake.configure({
      createDelayMs: 50,
      createFailure: 'could not find a log line that matches "Reached target .*Multi-User System.*"',
      createFailureOutput: [
        "Command Output: I0101 kubeadm init",
        "    client-key-data: c2VjcmV0LWtleS1ieXRlcw==",
        "-----BEGIN RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEA",
        "-----END RSA PRIVATE KEY-----",
        "error execution phase wait-control-plane",
      ],
    });
    const backend = await newBackend({ retryDelay: "1s" });
    const cluster = target();
    const failure =
      'kind create cluster exited with 1: ERROR: failed to create cluster: could not find a log line that matches "Reached target .*Multi-User System.*" | I0101 kubeadm init | error execution phase wait-control-plane';
    // As the engine does: whenever the cluster is observed absent, it orders it.
    const messages = new Set<string>();
    const startedAt: number[] = [];
    let observed: ClusterObservation = { exists: false };
    for (let round = 0; round < 1_000 && !(observed.exists && observed.phase === "failed"); round++) {
      if (!observed.exists) {
        const before = creates().length;
        await backend.create(cluster, "1.34.0");
        if (creates().length > before) startedAt.push(Date.now());
      }
      observed = await backend.observe(cluster);
      if (observed.exists && observed.phase === "provisioning" && observed.message)
        messages.add(observed.message.replace(/in \d+ s/, "in N s"));
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(observed).toMatchObject({ exists: true, phase: "failed", version: "1.34.0" });
    const message = observed.exists ? (observed.message ?? "") : "";
    expect(message).toBe(`${failure} (try 4 of 4); delete the Cluster to clean up, then create it again`);
    expect(message).not.toMatch(/c2VjcmV0|BEGIN/);
    expect(creates()).toHaveLength(4);
    // Each try removed what the previous one left, and waited 1 s, 2 s, 4 s after its failure.
    expect(fake.calls().filter((args) => args[0] === "delete")).toHaveLength(3);
    const gaps = startedAt.slice(1).map((at, i) => at - (startedAt[i] ?? 0));
    for (const [i, gap] of gaps.entries()) expect(gap).toBeGreaterThanOrEqual(1_000 * 2 ** i);
    expect([...messages].sort()).toEqual(
      [
        `try 1 of 4 failed, trying again in N s: ${failure}`,
        `try 2 of 4 failed, trying again in N s: ${failure}`,
        `try 3 of 4 failed, trying again in N s: ${failure}`,
        `try 2 of 4; the last failed: ${failure}`,
        `try 3 of 4; the last failed: ${failure}`,
        `try 4 of 4; the last failed: ${failure}`,
      ].sort(),
    );

    await backend.create(cluster, "1.34.0"); // a failed cluster stays failed until deleted
    expect(creates()).toHaveLength(4);
    expect(phase(await backend.observe(cluster))).toBe("failed");

    fake.configure({ createDelayMs: 50 });
    await backend.delete(cluster);
    expect(await backend.observe(cluster)).toEqual({ exists: false });
    await backend.create(cluster, "1.34.0");
    await until(backend, cluster, (o) => phase(o) === "ready");
    expect(creates()).toHaveLength(5);
  });

  it("starts a create over whose process was killed with no exit status (its Pod went): one cluster in the end", async () => {
    const { backend, cluster, pid } = await slowCreateStarted();
    process.kill(-pid, "SIGKILL");
    // What the killed create left is no cluster: the engine orders one again.
    expect(await until(backend, cluster, (o) => !o.exists)).toEqual({ exists: false });
    fake.configure({ createDelayMs: 300 });
    await backend.create(cluster, "1.34.0");
    expect(await until(backend, cluster, (o) => phase(o) === "ready")).toMatchObject({ phase: "ready" });
    const name = kindClusterNameOf(cluster.name, cluster.uid);
    expect(fake.calls().filter((call) => call[0] === "delete")).toEqual([
      [
        "delete",
        "cluster",
        "--name",
        name,
        "--kubeconfig",
        join(stateDirectory, "clusters", name, "kubeconfig"),
      ],
    ]);
    expect(fake.clusters().map((c) => c.name)).toEqual([name]);
  });

  it("refuses to change the version (kind cannot upgrade) and accepts the same version as a no-op", async () => {
    const backend = await newBackend();
    const cluster = target();
    await expect(backend.update(cluster, "1.34.0")).rejects.toThrow(/holds no such cluster/);
    await backend.create(cluster, "1.33.4");
    await until(backend, cluster, (o) => phase(o) === "ready");
    await backend.update(cluster, "1.33.4");
    await expect(backend.update(cluster, "1.34.0")).rejects.toThrow(
      "kind cannot upgrade a cluster in place: cluster team-a/dev runs Kubernetes 1.33.4; to get 1.34.0, delete the Cluster and create it again, or set spec.kubernetes.version back to 1.33.4",
    );
    expect(creates()).toHaveLength(1);
    expect(phase(await backend.observe(cluster))).toBe("ready");
  });

  it("deletes with kind delete cluster, idempotently, and leaves nothing behind", async () => {
    const backend = await newBackend();
    const cluster = target();
    const name = kindClusterNameOf(cluster.name, cluster.uid);
    await backend.delete(cluster); // absent: succeeds
    await backend.create(cluster, "1.34.0");
    await until(backend, cluster, (o) => phase(o) === "ready");
    await backend.delete(cluster);
    expect(await backend.observe(cluster)).toEqual({ exists: false });
    await backend.delete(cluster);
    const folder = join(stateDirectory, "clusters", name);
    expect(fake.calls().filter((args) => args[0] === "delete")).toEqual(
      Array(3).fill(["delete", "cluster", "--name", name, "--kubeconfig", join(folder, "kubeconfig")]),
    );
    expect(fake.clusters()).toEqual([]);
    expect(existsSync(folder)).toBe(false);
    expect(await backend.adminAccess(cluster)).toBeUndefined();
  });

  it("runs kind delete cluster again while Docker has not seen a node exit, until the cluster is gone", async () => {
    const backend = await newBackend();
    const cluster = target();
    await backend.create(cluster, "1.34.0");
    await until(backend, cluster, (o) => phase(o) === "ready");
    fake.configure({ deleteFailures: 1 });
    await backend.delete(cluster);
    expect(fake.calls().filter((args) => args[0] === "delete")).toHaveLength(2);
    expect(fake.clusters()).toEqual([]);
    expect(await backend.observe(cluster)).toEqual({ exists: false });
  });

  it("a delete while the create runs stops the create process and removes the cluster", async () => {
    const { backend, cluster, pid } = await slowCreateStarted();
    await until(backend, cluster, () => fake.clusters().length === 1); // kind registered the node
    await backend.delete(cluster);
    expect(isAlive(pid)).toBe(false);
    expect(await backend.observe(cluster)).toEqual({ exists: false });
    expect(fake.clusters()).toEqual([]);
  });

  it("reports a cluster deleted behind its back as absent, and creates it again when asked", async () => {
    const backend = await newBackend();
    const cluster = target();
    await backend.create(cluster, "1.34.0");
    await until(backend, cluster, (o) => phase(o) === "ready");
    fake.removeCluster(kindClusterNameOf(cluster.name, cluster.uid));
    expect(await backend.observe(cluster)).toEqual({ exists: false });
    await backend.create(cluster, "1.34.0");
    await until(backend, cluster, (o) => phase(o) === "ready");
    expect(creates()).toHaveLength(2);
  });

  it("gives admin access as kind's kubeconfig once ready, pointing at the observed endpoint", async () => {
    const backend = await newBackend();
    const cluster = target();
    await backend.create(cluster, "1.34.0");
    const ready = await until(backend, cluster, (o) => phase(o) === "ready");
    const access = await backend.adminAccess(cluster);
    expect(access?.kubeconfig).toContain(`server: ${ready.exists ? ready.endpoint : "?"}`);
    expect(access?.kubeconfig).toContain("client-key-data:");
    expect(fake.calls().at(-1)).toEqual([
      "get",
      "kubeconfig",
      "--name",
      kindClusterNameOf(cluster.name, cluster.uid),
    ]);
  });

  it("from a Pod, gives admin access through the node's address on the Docker network (access=network)", async () => {
    const backend = await newBackend({ access: "network" });
    const cluster = target();
    await backend.create(cluster, "1.34.0");
    const ready = await until(backend, cluster, (o) => phase(o) === "ready");
    const access = await backend.adminAccess(cluster, ready);
    expect(access?.kubeconfig).toContain(`server: ${ready.exists ? ready.internalEndpoint : "?"}`);
    expect(fake.calls().at(-1)).toEqual([
      "get",
      "kubeconfig",
      "--name",
      kindClusterNameOf(cluster.name, cluster.uid),
      "--internal",
    ]);
    // In a Pod (the API server's Service in the environment) that is the default; an unknown value is named.
    expect(kindAccess(undefined, { KUBERNETES_SERVICE_HOST: "10.96.0.1" })).toBe("network");
    expect(kindAccess(undefined, {})).toBe("host");
    await expect(newBackend({ access: "pod" })).rejects.toThrow(
      'kind backend: access "pod" must be host (the engine runs on the Docker host) or network (it runs in a Pod on the Docker network)',
    );
  });

  it("hands a cluster's folder over to an engine on another state folder (contract 1.5), which serves it as it is and creates nothing; a create still running is not handed over", async () => {
    const { backend, cluster } = await slowCreateStarted();
    await expect(backend.exportCluster?.(cluster)).rejects.toThrow(
      /kind cluster dev\.[0-9a-f]{8} of .* is still being created: move it once it is Ready/,
    );
    const ready = await until(backend, cluster, (o) => phase(o) === "ready");
    const state = (await backend.exportCluster?.(cluster)) ?? {};
    expect(Object.keys(state)).toEqual(
      expect.arrayContaining(["record.json", "create.exit", "authn__authentication.yaml"]),
    );
    const elsewhere = mkdtempSync(join(tmpdir(), "kind-backend-target-"));
    try {
      const other = await newBackend({}, elsewhere);
      // The engine imports before its first look (a look first would take the running cluster over as found).
      await other.importCluster?.(cluster, state);
      expect(await other.observe(cluster)).toEqual(ready);
      await other.create(cluster, "1.34.0"); // as the engine orders it, idempotently
      expect(creates()).toHaveLength(1);
      // What it holds stays: an older hand-over repeated changes nothing.
      const older = JSON.stringify({ ...JSON.parse(state["record.json"] ?? "{}"), version: "1.33.0" });
      await other.importCluster?.(cluster, { ...state, "record.json": older });
      expect(await other.observe(cluster)).toEqual(ready);
      await expect(
        other.importCluster?.(target({ uid: "0b8e2a51-0000-4000-8000-000000000001" }), state),
      ).rejects.toThrow(/the state handed over is of another cluster than/);
      await expect(other.importCluster?.(cluster, { ...state, "..__escape": "x" })).rejects.toThrow(
        'hand-over entry "..__escape" is not a file name',
      );
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it("passes the pool conformance check (contract 1.5): members made for no Cluster, bound by a record, a restart between every two steps", async () => {
    await checkPoolConformance(
      (context) =>
        createBackend({ ...context, options: { kind: fake.path, docker: "/bin/false", authn: "folder" } }),
      // The versions listed, as on a Docker host the fake cannot list kindest/node images of.
      { readyTimeoutMs: 15_000, config: config({ supportedVersions: [{ version: "1.34.0" }] }) },
    );
    expect(fake.clusters()).toEqual([]);
  });

  it("hands a Cluster bound to a pool member over with its binding: the other engine serves the member's kind cluster and creates none", async () => {
    const backend = await newBackend();
    const pools = backend.pools;
    if (!pools) throw new Error("the kind backend declares no pools");
    await pools.createMember(
      { id: "pool-handover1", pool: "warm", version: "1.34.0" },
      poolMemberTarget("pool-handover1", { name: "kind" }),
    );
    const cluster = target();
    await until(backend, poolMemberTarget("pool-handover1"), (o) => phase(o) === "ready");
    await pools.bind("pool-handover1", cluster);
    const ready = await until(backend, cluster, (o) => phase(o) === "ready");
    const state = (await backend.exportCluster?.(cluster)) ?? {};
    expect(Object.keys(state)).toContain("pool-member.json");
    const elsewhere = mkdtempSync(join(tmpdir(), "kind-backend-target-"));
    try {
      const other = await newBackend({}, elsewhere);
      await other.importCluster?.(cluster, state);
      expect(await other.observe(cluster)).toEqual(ready);
      await other.create(cluster, "1.34.0");
      expect(creates()).toHaveLength(1);
      expect(readdirSync(join(elsewhere, "clusters"))).toEqual([kindClusterName("pool-handover1")]);
      expect(await other.pools?.listMembers("warm")).toEqual([
        expect.objectContaining({ id: "pool-handover1", boundTo: cluster.uid }),
      ]);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it("adopts a running kind cluster its Cluster names by annotation, and leaves it running when the Cluster goes", async () => {
    // The landscape's platform cluster, made before any engine (here by the fake's own create).
    execFileSync(fake.path, ["create", "cluster", "--name", "platform"]);
    const backend = await newBackend();
    const platform = target({ annotations: { [KIND_NAME_ANNOTATION]: "platform" } });
    expect(await backend.observe(platform)).toEqual({ exists: false }); // not ours until the Cluster asks
    await backend.create(platform, "1.36.3");
    const creates = fake.calls().filter((call) => call[0] === "create");
    expect(creates).toEqual([["create", "cluster", "--name", "platform"]]); // only the fake's own: adopted, not made
    const ready = await backend.observe(platform);
    expect(ready).toMatchObject({ exists: true, phase: "ready", endpoint: expect.stringMatching(/^https:/) });
    expect((await backend.adminAccess(platform, ready))?.kubeconfig).toContain("server: https://127.0.0.1:");
    await backend.delete(platform);
    expect(await backend.observe(platform)).toEqual({ exists: false });
    expect(fake.clusters().map((cluster) => cluster.name)).toEqual(["platform"]); // still running
    expect(fake.calls().some((call) => call[0] === "delete")).toBe(false);
    // A name no kind cluster may have is refused with the annotation named.
    await expect(
      backend.create(target({ annotations: { [KIND_NAME_ANNOTATION]: "Platform_1" } }), "1.36.3"),
    ).rejects.toThrow(`annotation ${KIND_NAME_ANNOTATION} "Platform_1" is not a kind cluster name`);
    fake.removeCluster("platform");
  });

  it("takes over a kind cluster running under the name openMCP's kind provider gives the Cluster, with no record here: ready as it runs, created nothing, deleted with the Cluster", async () => {
    const cluster = target();
    // As openMCP's kind provider leaves it: `<name>.<uid prefix>`, made by kind, and no state of ours.
    fake.addCluster(kindClusterNameOf(cluster.name, cluster.uid));
    const backend = await newBackend();
    const creates = () => fake.calls().filter((args) => args[0] === "create");
    expect(await backend.observe(cluster)).toMatchObject({ exists: true, phase: "ready" });
    await backend.create(cluster, "1.34.0"); // what the engine would order if it had seen it absent: nothing
    expect(creates()).toEqual([]);
    // OIDC trust needs an API server started with it: a taken-over cluster says so.
    await expect(backend.trustOidcIssuers?.(cluster, [])).rejects.toThrow(
      /was created before this backend set up OIDC trust/,
    );
    await backend.delete(cluster); // it is the Cluster's: it goes with it
    expect(fake.clusters()).toEqual([]);
  });

  it("with MetalLB: incomplete until create starts the install, then MetalLBReady False naming the failed step, not retried", async () => {
    // A docker that knows the kind network (172.18.0.0/16), the node on it (172.18.0.2), and the manifest.
    const docker = join(fake.directory, "docker");
    const network = {
      IPAM: { Config: [{ Subnet: "172.18.0.0/16", Gateway: "172.18.0.1" }] },
      Containers: {},
    };
    writeFileSync(
      docker,
      `#!/bin/sh\ncase "$1" in network) echo '${JSON.stringify(network)}' ;; inspect) echo 172.18.0.2 ;; run) echo 'kind: Namespace' ;; esac\n`,
    );
    chmodSync(docker, 0o755);
    const backend = await newBackend({ docker, metallb: "true" });
    const cluster = target();
    await backend.create(cluster, "1.34.0");
    expect(await until(backend, cluster, (o) => o.exists && o.incomplete !== undefined)).toMatchObject({
      phase: "provisioning",
      incomplete: "MetalLB is not installed yet",
      conditions: [{ type: "MetalLBReady", status: "Unknown", reason: "Installing" }],
    });
    await backend.create(cluster, "1.34.0"); // what the engine does for an incomplete cluster
    const failed = await until(backend, cluster, (o) => phase(o) === "ready");
    expect(failed).toMatchObject({
      conditions: [
        {
          type: "MetalLBReady",
          status: "False",
          reason: "InstallFailed",
          message: expect.stringMatching(
            /^MetalLB install exited with 1: ERROR: loading the images quay.io\/metallb\/controller:v\S+ quay.io\/metallb\/speaker:v\S+ \(hack\/metallb\/build.sh makes them\) into the node failed: ERROR: unknown command "load docker-image"/,
          ),
        },
      ],
    });
    expect(failed.exists && failed.incomplete).toBeUndefined();
    await backend.create(cluster, "1.34.0");
    expect(fake.calls().filter((args) => args[0] === "load")).toEqual([
      [
        "load",
        "docker-image",
        "--name",
        kindClusterNameOf(cluster.name, cluster.uid),
        METALLB_IMAGES.controller,
        METALLB_IMAGES.speaker,
      ],
    ]);
    const folder = join(stateDirectory, "clusters", kindClusterNameOf(cluster.name, cluster.uid));
    expect(readFileSync(join(folder, "metallb-pool.yaml"), "utf8")).toContain(
      "172.18.255.239-172.18.255.246",
    );
  });

  it("refuses a metallb option that is neither true nor false", async () => {
    await expect(newBackend({ metallb: "/some/folder" })).rejects.toThrow(
      /metallb "\/some\/folder" must be true or false/,
    );
  });

  it("redacts credentials from kind output it quotes", () => {
    expect(
      redact("client-key-data: abc\nfine line\n-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"),
    ).toBe("[redacted]\nfine line\n[redacted]");
    expect(redact(`token ${"A".repeat(80)}`)).toBe("token [redacted]");
  });
});
