/**
 * A rollout's deprecated-API check on a real cluster: a `local` Cluster (its own etcd and kube-apiserver 1.36, run
 * with `runtimeConfig: networking.k8s.io/v1beta1=true`, as a cluster still serving an older workload would) is asked
 * for `networking.k8s.io/v1beta1 servicecidrs`; its API server's /metrics then shows
 * `apiserver_requested_deprecated_apis{…removed_release="1.37"…} 1` (printed), and a Rollout to 1.37.0 holds its
 * canary with `DeprecatedAPIsInUse` naming the API and the Cluster, which keeps its version. (The local backend
 * offers only its binaries' version, so the same run is also held by `VersionNotOffered`: both are named.) A
 * `runtimeConfig` that is not kube-apiserver's `--runtime-config` is refused.
 */
import { request } from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import { LOCAL_PROFILE, localAdmin, localBackends, startLocalWorld } from "../support/local-backend-state.ts";
import { isReady, type World } from "../support/world.ts";
import { createRollout, FAST_ROLLOUTS, rolloutWhere } from "../support/world-rollouts.ts";

const TARGET = "1.37.0";
const locals = localBackends("local-rollout-preflight-");
let world: World;
let cluster: Cluster;
let admin: KubeConfig;

/** GETs `path` of the cluster's API server with its admin kubeconfig, as text. */
async function get(path: string): Promise<string> {
  const options: Parameters<typeof request>[1] = { method: "GET" };
  await admin.applyToHTTPSOptions(options);
  const server = admin.getCurrentCluster()?.server ?? "";
  return new Promise((resolve, reject) => {
    request(new URL(path, server), options, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        if ((response.statusCode ?? 500) >= 300)
          reject(new Error(`GET ${path}: ${response.statusCode} ${text}`));
        else resolve(text);
      });
    })
      .on("error", reject)
      .end();
  });
}

beforeAll(async () => {
  world = await startLocalWorld(locals, {
    backend: { runtimeConfig: "networking.k8s.io/v1beta1=true" },
    engine: FAST_ROLLOUTS,
  });
  await world.createCluster("old-workload", { profile: LOCAL_PROFILE, kubernetes: { version: "1.36.3" } });
  cluster = (await world.waitFor("old-workload", isReady, 180_000)) as Cluster;
  admin = await localAdmin(world, cluster);
}, 240_000);

afterAll(() => locals.close(world), 120_000);

describe("a Rollout over a local Cluster whose API server was asked for a deprecated API", {
  timeout: 120_000,
}, () => {
  it("is served by a local backend whose runtimeConfig must be kube-apiserver's --runtime-config", async () => {
    await expect(locals.open(locals.folder(), { runtimeConfig: "v1beta1 --insecure" })).rejects.toThrow(
      /runtimeConfig "v1beta1 --insecure" must be kube-apiserver's --runtime-config/,
    );
  });

  it("holds its stage with DeprecatedAPIsInUse, naming the API and the Cluster", async () => {
    // A workload still on the beta API: the API server marks it requested, with the release that removes it.
    await get("/apis/networking.k8s.io/v1beta1/servicecidrs");
    const line = (await get("/metrics"))
      .split("\n")
      .find(
        (l) => l.startsWith("apiserver_requested_deprecated_apis{") && l.includes('resource="servicecidrs"'),
      );
    console.log(`the Cluster's API server: ${line}`);
    expect(line).toMatch(/group="networking\.k8s\.io",removed_release="1\.37",.*version="v1beta1"\} 1$/);

    await createRollout(world, "to-1-37", { version: TARGET });
    const held = await rolloutWhere(
      world,
      "to-1-37",
      "rollout to-1-37 held by its preflight",
      (r) => r.status?.conditions?.some((c) => c.type === "Preflight" && c.status === "False") === true,
    );
    const preflight = held.status?.conditions?.find((c) => c.type === "Preflight");
    console.log(`the Rollout's Preflight condition: ${preflight?.reason}: ${preflight?.message}`);
    expect(preflight?.message).toContain(
      `DeprecatedAPIsInUse: Cluster old-workload's API server was asked for networking.k8s.io/v1beta1 servicecidrs (removed in 1.37), which ${TARGET} no longer serves`,
    );
    expect(preflight?.message).toContain("VersionNotOffered: Cluster old-workload");
    expect(held.status?.phase).toBe("Progressing");
    expect(held.status?.targets?.map((t) => [t.name, t.progress])).toEqual([["old-workload", "pending"]]);
    const now = (await world.waitFor("old-workload", isReady, 5_000)) as Cluster;
    expect(now.spec.kubernetes?.version).toBe("1.36.3");
  });
});
