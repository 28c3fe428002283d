/** What a proposed change does to the object as the API server would store it (pure). */
import { describe, expect, it } from "vitest";
import { CLUSTER_FINALIZERS } from "../../../../src/api/constants/cluster.ts";
import { applyChange, PlanChangeError } from "../../../../src/runtime/plan/plan-changes.ts";
import { selectorHolds } from "../../../../src/runtime/plan/planned-sources.ts";
import { aCluster, stored } from "../../../support/builders.ts";

const NOW = "2026-11-28T12:00:00Z";
const live = stored(aCluster({ name: "web", namespace: "team", version: "1.32.7", labels: { team: "a" } }), {
  generation: 3,
});

describe("applyChange", () => {
  it("creates an absent object with a stable uid, generation 1 and no status", () => {
    const manifest = { ...aCluster({ name: "new", namespace: "team" }), status: { phase: "Ready" } };
    const first = applyChange({ apply: manifest as never }, undefined, NOW);
    const again = applyChange({ apply: manifest as never }, undefined, NOW);
    expect(first.verb).toBe("create");
    expect(first.after).toMatchObject({ metadata: { generation: 1, creationTimestamp: NOW } });
    expect(first.after).not.toHaveProperty("status");
    const uidOf = (effect: typeof first) => (effect.after?.metadata as { uid?: string } | undefined)?.uid;
    expect(uidOf(first)).toMatch(/^[0-9a-f]{8}-/);
    expect(uidOf(first)).toBe(uidOf(again));
  });

  it("replaces the spec, sets the labels given (others stay) and bumps the generation only for a new spec", () => {
    const { status: _status, ...manifest } = live;
    const newer = {
      ...manifest,
      metadata: { ...manifest.metadata, labels: { tier: "gold" } },
      spec: { ...live.spec, kubernetes: { version: "1.33.3" } },
    };
    const updated = applyChange({ apply: newer as never }, live, NOW);
    expect(updated.verb).toBe("update");
    expect(updated.after?.metadata).toMatchObject({ generation: 4, labels: { team: "a", tier: "gold" } });
    const relabelled = applyChange(
      { apply: { ...manifest, metadata: { ...manifest.metadata, labels: { tier: "gold" } } } as never },
      live,
      NOW,
    );
    expect(relabelled.after?.metadata).toMatchObject({ generation: 3 });
    expect(applyChange({ apply: manifest as never }, live, NOW).verb).toBe("none");
  });

  it("marks an object with finalizers for deletion, and removes one without", () => {
    const held = { ...live, metadata: { ...live.metadata, finalizers: [CLUSTER_FINALIZERS.cluster] } };
    const target = { delete: { kind: "Cluster", namespace: "team", name: "web" } };
    expect(applyChange(target, held, NOW).after).toMatchObject({ metadata: { deletionTimestamp: NOW } });
    expect(applyChange(target, live, NOW)).toMatchObject({ verb: "delete", after: undefined });
  });

  it("refuses what cannot be planned, saying why", () => {
    expect(() =>
      applyChange({ delete: { kind: "Cluster", namespace: "team", name: "ghost" } }, undefined, NOW),
    ).toThrow(new PlanChangeError("Cluster team/ghost does not exist; nothing to delete"));
    expect(() => applyChange({ delete: { kind: "Gadget", name: "x" } }, undefined, NOW)).toThrow(
      /does not know kind Gadget/,
    );
    expect(() => applyChange({ delete: { kind: "Cluster", name: "web" } }, live, NOW)).toThrow(/namespaced/);
    expect(() =>
      applyChange({ apply: { ...live, apiVersion: "clusters.openmcp.cloud/v9" } as never }, live, NOW),
    ).toThrow(/served as clusters.openmcp.cloud\/v1alpha1/);
  });
});

describe("selectorHolds", () => {
  it("matches equality-based selectors as the caches use them", () => {
    const labels = { a: "1", b: "2" };
    expect(selectorHolds(undefined, labels)).toBe(true);
    expect(selectorHolds("a", labels)).toBe(true);
    expect(selectorHolds("c", labels)).toBe(false);
    expect(selectorHolds("!c,a=1,b==2", labels)).toBe(true);
    expect(selectorHolds("a!=1", labels)).toBe(false);
    expect(selectorHolds("a=2", labels)).toBe(false);
  });
});
