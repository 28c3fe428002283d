/** The simulated backend hands a cluster over to another instance (contract 1.5): same cluster, no create. */
import { describe, expect, it } from "vitest";
import { SimulatedBackend } from "../../../src/providers/simulated.ts";
import { aClusterTarget } from "../../support/builders.ts";

describe("the simulated backend's hand-over", () => {
  it("gives another instance the cluster as it is, without a create there", async () => {
    const source = new SimulatedBackend({ provisionDelayMs: 0 });
    const target = new SimulatedBackend({ provisionDelayMs: 0 });
    const cluster = aClusterTarget();
    await source.create(cluster, "1.33.3");
    const state = await source.exportCluster(cluster);
    await target.importCluster(cluster, state);
    expect(await target.observe(cluster)).toEqual(await source.observe(cluster));
    expect(target.createdTotal).toBe(0);
    expect(await source.observe(cluster)).toMatchObject({ exists: true, phase: "ready" }); // the export only reads
  });

  it("keeps what it holds already and refuses the state of another cluster", async () => {
    const source = new SimulatedBackend({ provisionDelayMs: 0 });
    const target = new SimulatedBackend({ provisionDelayMs: 0 });
    const cluster = aClusterTarget();
    await source.create(cluster, "1.33.3");
    await target.create(cluster, "1.32.7");
    await target.importCluster(cluster, await source.exportCluster(cluster));
    expect(await target.observe(cluster)).toMatchObject({ version: "1.32.7" });
    const other = aClusterTarget({ uid: "another-uid" });
    await expect(
      new SimulatedBackend().importCluster(other, await source.exportCluster(cluster)),
    ).rejects.toThrow(/another cluster/);
  });

  it("exports nothing of a cluster it does not hold", async () => {
    expect(await new SimulatedBackend().exportCluster(aClusterTarget())).toEqual({});
  });
});
