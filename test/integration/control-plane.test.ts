/** The control-plane harness on real etcd + kube-apiserver: isolation, TokenRequest, RBAC, cleanup on every path. */

import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  type ApiException,
  ApiextensionsV1Api,
  AuthenticationV1Api,
  CoreV1Api,
  KubeConfig,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ControlPlane,
  ControlPlaneStartError,
  startControlPlane,
} from "../../src/controlplane/control-plane.ts";
import { installingCrds } from "../../src/runtime/api-server/install-crds.ts";
import { bearerKubeConfig } from "../support/access-proofs.ts";
import { isAlive, waitUntilGone } from "../support/processes.ts";
import { serviceAccountToken } from "../support/service-account-token.ts";

const run = promisify(execFile);

describe("a local control plane", () => {
  let controlPlane: ControlPlane;

  beforeAll(async () => {
    controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
  });
  afterAll(async () => {
    await controlPlane?.stop();
  });

  it("serves every CRD of crds/ to the admin client", async () => {
    const extensions = controlPlane.kubeConfig.makeApiClient(ApiextensionsV1Api);
    const names = (await extensions.listCustomResourceDefinition()).items.map((crd) => crd.metadata?.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "clusters.clusters.openmcp.cloud",
        "clusterprofiles.clusters.openmcp.cloud",
        "clusterrequests.clusters.openmcp.cloud",
        "accessrequests.clusters.openmcp.cloud",
        "providerconfigs.engine.openmcp.cloud",
      ]),
    );
  });

  it("writes a kubeconfig file that kubectl-style clients can load", async () => {
    const fromFile = new KubeConfig();
    fromFile.loadFromFile(controlPlane.kubeconfigPath);
    const core = fromFile.makeApiClient(CoreV1Api);
    const namespaces = await core.listNamespace();
    expect(namespaces.items.map((ns) => ns.metadata?.name)).toContain("default");
  });

  it("issues service-account tokens that authenticate but are authorized by RBAC only", async () => {
    const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: "token-test" } } });
    const token = await serviceAccountToken(core, "token-test", "robot", 600);
    expect(token).not.toBe("");

    const asRobot = bearerKubeConfig(controlPlane.kubeConfig, token, controlPlane.server);
    const review = await asRobot.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: {} });
    expect(review.status?.userInfo?.username).toBe("system:serviceaccount:token-test:robot");

    const denied = await asRobot
      .makeApiClient(CoreV1Api)
      .listNamespace()
      .then(
        () => undefined,
        (error: ApiException<unknown>) => error.code,
      );
    expect(denied).toBe(403);
  });

  it("runs beside a second control plane without sharing ports, data or objects", async () => {
    const second = await startControlPlane();
    try {
      expect(second.server).not.toBe(controlPlane.server);
      expect(second.directory).not.toBe(controlPlane.directory);
      const firstCore = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
      const secondCore = second.kubeConfig.makeApiClient(CoreV1Api);
      await firstCore.createNamespace({ body: { metadata: { name: "only-in-first" } } });
      const inSecond = await secondCore.readNamespace({ name: "only-in-first" }).then(
        () => 200,
        (error: ApiException<unknown>) => error.code,
      );
      expect(inSecond).toBe(404);
    } finally {
      await second.stop();
    }
  });
});

describe("stopping and failing", () => {
  it("stop ends both processes and removes the folder, and may be called twice", async () => {
    const controlPlane = await startControlPlane();
    const pids = [controlPlane.etcd.pid, controlPlane.apiServer.pid];
    expect(pids.every(isAlive)).toBe(true);
    await Promise.all([controlPlane.stop(), controlPlane.stop()]);
    expect(pids.filter(isAlive)).toEqual([]);
    expect(existsSync(controlPlane.directory)).toBe(false);
  });

  it("a test process killed with SIGKILL leaves no process and no data behind", async () => {
    const node = process.execPath;
    const { stdout } = await run(node, [
      join(import.meta.dirname, "..", "support", "crashing-owner.ts"),
    ]).catch((error: { stdout?: string; signal?: string }) => {
      expect(error.signal).toBe("SIGKILL");
      return { stdout: error.stdout ?? "" };
    });
    const left = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as {
      pids: number[];
      directory: string;
    };
    expect(left.pids).toHaveLength(2);
    await waitUntilGone(left.pids, left.directory);
  });

  it("a start that fails names the process, shows its log and leaves nothing behind", async () => {
    const parent = mkdtempSync(join(tmpdir(), "cp-fail-"));
    const failure = await startControlPlane({
      parentDirectory: parent,
      extraApiServerArgs: ["--no-such-flag=1"],
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ControlPlaneStartError);
    expect((failure as Error).message).toMatch(/kube-apiserver exited/);
    expect((failure as Error).message).toMatch(
      /last lines of kube-apiserver[\s\S]*unknown flag: --no-such-flag/,
    );
    expect(readdirSync(parent)).toEqual([]);
    rmdirSync(parent); // empty, as just asserted
  });
});
