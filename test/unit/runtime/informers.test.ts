/** The engine's caches: one per name, declared before start; a late or conflicting declaration is refused by name. */
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/api/logger.ts";
import { type CacheSpec, InformerSet, type SecretObject } from "../../../src/runtime/informers.ts";
import { CACHES } from "../../../src/runtime/kinds/caches.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { nowhereKubeConfig } from "../../support/nowhere.ts";

describe("InformerSet", () => {
  it("gives every reader of one cache name the same cache, also from its own copy of the spec", () => {
    const informers = new InformerSet(nowhereKubeConfig(), silentLogger, new FakeClock());
    const clusters = informers.of(CACHES.clusters);
    expect(informers.of({ ...CACHES.clusters })).toBe(clusters);
    expect(informers.of(CACHES.profiles)).not.toBe(clusters);
    expect(informers.sizes().map(({ cache }) => cache)).toEqual(["Cluster", "ClusterProfile"]);
  });

  it("refuses a second, different spec under a name already declared, naming both", () => {
    const informers = new InformerSet(nowhereKubeConfig(), silentLogger, new FakeClock());
    informers.of(CACHES.accessSecrets);
    const other: CacheSpec<SecretObject> = { ...CACHES.accessSecrets, labelSelector: "app=other" };
    expect(() => informers.of(other)).toThrow(
      /^cache AccessSecret is declared twice, differently \(v1 secrets labelled .+ and v1 secrets labelled app=other\)/,
    );
  });

  it("refuses a cache first asked for after start, naming it, and still hands out the ones declared before", async () => {
    const informers = new InformerSet(nowhereKubeConfig(), silentLogger, new FakeClock());
    const clusters = informers.of(CACHES.clusters);
    const starting = informers.start(); // lists nothing: nobody answers, and the fake clock never retries
    try {
      expect(informers.of(CACHES.clusters)).toBe(clusters);
      expect(() => informers.of(CACHES.grants)).toThrow(
        /^cache ClusterRequestGrant \([a-z.]+\/v1alpha1 clusterrequestgrants\) was first asked for after the caches started/,
      );
      expect(informers.sizes().map(({ cache }) => cache)).toEqual(["Cluster"]);
    } finally {
      informers.stop();
    }
    expect(informers.hasSynced()).toBe(false);
    void starting;
  });
});
