/** adminAccess with the runtime's observation (contract 1.3): readiness is taken from it, not looked at again. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ClusterObservation, ClusterTarget } from "../../../src/api/backend.ts";
import { ExistingBackend } from "../../../src/providers/existing.ts";

/** A kubeconfig whose server never answers (port 9 on loopback): observing it by itself never says ready. */
const kubeconfig = `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "https://127.0.0.1:9" } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
current-context: x
`;

const target: ClusterTarget = {
  uid: "u-1",
  namespace: "team",
  name: "dev",
  tenancy: "Shared",
  profile: "p",
  providerConfig: "existing-dev",
  settings: { kubeconfigSecretRef: { namespace: "clusters", name: "dev" } },
};

let directory: string;
beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), "admin-access-observed-"));
});
afterEach(() => rmSync(directory, { recursive: true, force: true }));

describe("adminAccess given the runtime's observation", () => {
  it("hands out access for a ready observation and none for another, without observing again", async () => {
    const backend = new ExistingBackend({
      readSecret: async () => kubeconfig,
      stateFile: join(directory, "existing.json"),
      probeTimeoutMs: 200,
    });
    await backend.create(target, "1.36.3");
    const ready: ClusterObservation = { exists: true, phase: "ready", version: "1.36.3" };
    const provisioning: ClusterObservation = { exists: true, phase: "provisioning", version: "1.36.3" };
    expect(await backend.adminAccess(target, ready)).toEqual({ kubeconfig });
    expect(await backend.adminAccess(target, provisioning)).toBeUndefined();
    expect(await backend.adminAccess(target)).toBeUndefined(); // it looks itself: the server does not answer
  });
});
