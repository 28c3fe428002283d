/** What a replaced Secret keeps of what others added to it: their keys, labels, annotations, finalizers, owners. */
import type { V1Secret } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import {
  ENGINE_KEYS_ANNOTATION,
  mergedSecret,
} from "../../../../../src/runtime/kinds/shared/owned-secret.ts";

const ownerRef = { apiVersion: "v1", kind: "AccessRequest", name: "r", uid: "u-1", controller: true };

/** The engine's Secret as it wants it now: a new kubeconfig, no expiry any more. */
const desired: V1Secret = {
  metadata: { name: "r.kubeconfig", namespace: "ns", labels: { owner: "u-1" }, ownerReferences: [ownerRef] },
  type: "Opaque",
  stringData: { kubeconfig: "new", creationTimestamp: "2" },
};

/** As stored: the engine wrote three keys last time; an account runtime added two keys, an annotation, a finalizer. */
const existing: V1Secret = {
  metadata: {
    name: "r.kubeconfig",
    namespace: "ns",
    resourceVersion: "42",
    labels: { owner: "u-1", "account.example/renewed": "true" },
    annotations: {
      [ENGINE_KEYS_ANNOTATION]: "creationTimestamp,expirationTimestamp,kubeconfig",
      "ocp.services.open-control-plane.io/credential-expires-at": "2026-12-01T00:00:00Z",
    },
    finalizers: ["account.openmcp.cloud/request"],
    ownerReferences: [ownerRef, { apiVersion: "v1", kind: "Account", name: "a", uid: "u-9" }],
  },
  data: {
    kubeconfig: "b2xk",
    creationTimestamp: "MQ==",
    expirationTimestamp: "Mw==",
    token: "dG9rZW4=",
    "mounted-kubeconfig": "bW91bnRlZA==",
  },
};

describe("mergedSecret", () => {
  const merged = mergedSecret(existing, desired);

  it("writes the engine's keys and keeps the keys others added", () => {
    expect(merged.stringData).toEqual({ kubeconfig: "new", creationTimestamp: "2" });
    expect(merged.data).toEqual({ token: "dG9rZW4=", "mounted-kubeconfig": "bW91bnRlZA==" });
  });

  it("drops a key the engine wrote last time and writes no more", () => {
    expect(merged.data).not.toHaveProperty("expirationTimestamp");
    expect(merged.metadata?.annotations?.[ENGINE_KEYS_ANNOTATION]).toBe("creationTimestamp,kubeconfig");
  });

  it("keeps others' labels, annotations, finalizers and owners, guarded by the stored resourceVersion", () => {
    expect(merged.metadata?.labels).toEqual({ owner: "u-1", "account.example/renewed": "true" });
    expect(merged.metadata?.annotations?.["ocp.services.open-control-plane.io/credential-expires-at"]).toBe(
      "2026-12-01T00:00:00Z",
    );
    expect(merged.metadata?.finalizers).toEqual(["account.openmcp.cloud/request"]);
    expect(merged.metadata?.ownerReferences?.map((o) => o.uid)).toEqual(["u-1", "u-9"]);
    expect(merged.metadata?.resourceVersion).toBe("42");
  });

  it("keeps every key of a Secret written before the engine named its keys, and overwrites its own", () => {
    const older = mergedSecret({ ...existing, metadata: { ...existing.metadata, annotations: {} } }, desired);
    expect(Object.keys(older.data ?? {}).sort()).toEqual([
      "expirationTimestamp",
      "mounted-kubeconfig",
      "token",
    ]);
  });
});
