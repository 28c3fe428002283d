/**
 * LoadBalancer Services on kind clusters, as openMCP's kind provider gives them: the engine with the `kind`
 * backend and `metallb=true` (MetalLB's images built offline by hack/metallb/build.sh) makes a Cluster a kind
 * cluster with MetalLB and a pool from the kind network, Ready with `MetalLBReady` True; a LoadBalancer
 * Service there gets an address from the pool that answers from this host; deletion leaves no container.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { join } from "node:path";
import { AppsV1Api, CoreV1Api, type CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { METALLB_CONDITION, METALLB_IMAGES } from "../../src/providers/kind/metallb.ts";
import { KIND_NAME_ANNOTATION } from "../../src/providers/kind/names.ts";
import { aCluster } from "../support/builders.ts";
import { containersNamed, containerToolchain, run } from "../support/containers.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { type KindEngineWorld, startKindEngineWorld } from "../support/kind-engine-world.ts";
import { readCustomObject } from "../support/maybe-absent.ts";

const NS = "kind-metallb";
const PROFILE = "test.kind-metallb.kind";
/** This file's kind cluster, named through the annotation so that what it leaves is easy to find: `mlb-…`. */
const KIND_NAME = `mlb-${randomBytes(4).toString("hex")}`;
const tools = containerToolchain();
let world: KindEngineWorld;
let custom: CustomObjectsApi;
let backend: ClusterBackend;
let cluster: Cluster;
let admin: KubeConfig;

/** MetalLB's images in the Docker engine, as hack/metallb/build.sh makes them (a look once built; the heavy setup builds them first). */
function ensureMetallbImages(): void {
  execFileSync(join(import.meta.dirname, "..", "..", "hack", "metallb", "build.sh"), [], {
    encoding: "utf8",
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, DOCKER: tools.docker },
    timeout: 3_600_000,
  });
}

const readCluster = (name: string) => readCustomObject<Cluster>(custom, RESOURCES.Cluster, NS, name);

beforeAll(async () => {
  ensureMetallbImages();
  world = await startKindEngineWorld({
    namespace: NS,
    providerName: "kind-metallb",
    settings: { metallb: "true" },
    fallbackNames: [KIND_NAME],
  });
  ({ custom, backend } = world);
}, 600_000);

afterAll(async () => {
  await world?.stop();
}, 300_000);

describe("LoadBalancer Services on kind clusters (MetalLB)", { timeout: 900_000 }, () => {
  it("makes a Cluster Ready with MetalLB installed: MetalLBReady True, naming the pool", async () => {
    const created = performance.now();
    const body = aCluster({
      name: "lb",
      namespace: NS,
      profile: PROFILE,
      tenancy: "Exclusive",
      version: tools.kubernetesVersion,
      annotations: { [KIND_NAME_ANNOTATION]: KIND_NAME },
    });
    await custom.createNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, body });
    cluster = await eventually(
      async () => satisfying(await readCluster("lb"), (c) => c?.status?.phase === "Ready") as Cluster,
      { what: "Cluster lb Ready", timeoutMs: 600_000, intervalMs: 1_000 },
    );
    // What MetalLB adds to a create: from kind's exit to the install's (both written by their wrappers).
    const folder = join(world.stateDirectory, "clusters", KIND_NAME);
    const exited = (file: string) => statSync(join(folder, file)).mtimeMs;
    console.error(
      `kind-metallb: Cluster Ready in ${Math.round((performance.now() - created) / 1000)} s, of which the MetalLB install ${Math.round((exited("metallb.exit") - exited("create.exit")) / 1000)} s`,
    );
    const condition = cluster.status?.conditions?.find((c) => c.type === METALLB_CONDITION);
    expect(condition).toMatchObject({ status: "True", reason: "Installed" });
    expect(condition?.message).toMatch(/from \d+\.\d+\.\d+\.\d+-\d+\.\d+\.\d+\.\d+ on the kind network/);
    expect(await containersNamed(KIND_NAME)).toEqual([`${KIND_NAME}-control-plane`]);
    const access = await backend.adminAccess(world.targetOf(cluster));
    admin = new KubeConfig();
    admin.loadFromString(access?.kubeconfig ?? "");
  });

  it("gives a LoadBalancer Service an address from the pool, which answers from this host", async () => {
    const pool = /from (\d+\.\d+\.\d+\.\d+)-(\d+\.\d+\.\d+\.\d+)/.exec(
      cluster.status?.conditions?.find((c) => c.type === METALLB_CONDITION)?.message ?? "",
    );
    const core = admin.makeApiClient(CoreV1Api);
    const labels = { app: "hello" };
    // A tiny HTTP server in an image the node already holds (MetalLB's controller image is Debian with perl):
    // nothing more to load, no registry.
    const image = METALLB_IMAGES.controller;
    await admin.makeApiClient(AppsV1Api).createNamespacedDeployment({
      namespace: "default",
      body: {
        metadata: { name: "hello" },
        spec: {
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              containers: [
                {
                  name: "hello",
                  image,
                  imagePullPolicy: "Never",
                  command: ["perl", "-MIO::Socket::INET", "-e"],
                  args: [
                    'my $s = IO::Socket::INET->new(LocalPort => 8080, Listen => 16, ReuseAddr => 1) or die "listen: $!"; ' +
                      'while (my $c = $s->accept) { my $l = <$c>; print $c "HTTP/1.0 200 OK\\r\\nContent-Type: text/plain\\r\\n\\r\\nhello from kind via MetalLB\\n"; close $c; }',
                  ],
                  ports: [{ containerPort: 8080 }],
                },
              ],
            },
          },
        },
      },
    });
    await core.createNamespacedService({
      namespace: "default",
      body: {
        metadata: { name: "hello" },
        spec: { type: "LoadBalancer", selector: labels, ports: [{ port: 80, targetPort: 8080 }] },
      },
    });
    const service = await eventually(
      async () =>
        satisfying(
          await core.readNamespacedService({ namespace: "default", name: "hello" }),
          (s) => !!s.status?.loadBalancer?.ingress?.[0]?.ip,
        ),
      { what: "Service hello has an external IP", timeoutMs: 120_000, intervalMs: 1_000 },
    );
    const ip = service.status?.loadBalancer?.ingress?.[0]?.ip ?? "";
    const number = (a: string) => a.split(".").reduce((sum, part) => sum * 256 + Number(part), 0);
    expect(pool).not.toBeNull();
    expect(number(ip)).toBeGreaterThanOrEqual(number(pool?.[1] ?? ""));
    expect(number(ip)).toBeLessThanOrEqual(number(pool?.[2] ?? ""));
    // From this host, on the kind network: the speaker answers ARP for the address, kube-proxy forwards to the Pod.
    const body = await eventually(
      async () => {
        const response = await fetch(`http://${ip}/`, { signal: AbortSignal.timeout(5_000) });
        return response.text();
      },
      { what: `http://${ip}/ answers from the host`, timeoutMs: 180_000, intervalMs: 2_000 },
    );
    expect(body).toBe("hello from kind via MetalLB\n");
  });

  it("deletes: the kind cluster and its node container go, then the Cluster", async () => {
    await custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name: "lb" });
    await eventually(async () => expect(await readCluster("lb")).toBeUndefined(), {
      what: "Cluster lb gone",
      timeoutMs: 180_000,
      intervalMs: 1_000,
    });
    expect(await containersNamed(KIND_NAME)).toEqual([]);
    expect((await run(tools.kind, ["get", "clusters"])).split("\n")).not.toContain(KIND_NAME);
    expect(world.logLines.join("\n")).not.toMatch(/BEGIN CERTIFICATE|client-key-data|eyJhbGci/);
  });
});
