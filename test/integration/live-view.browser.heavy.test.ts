import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { Engine } from "../../src/runtime/engine.ts";
import { CACHES } from "../../src/runtime/kinds/caches.ts";
import { buildingKindsTimed } from "../../src/runtime/kinds/registry.ts";
import { LiveViewModel } from "../../src/views/live-view-model.ts";
import type { LiveViewServer } from "../../src/views/live-view-server.ts";
import { expectOnlyTheServerAsked, launchChromium, openLiveView, screenshot } from "../support/chromium.ts";
import { type ClusterHarness, isReady, startClusterHarness } from "../support/cluster-harness.ts";
import { eventually } from "../support/eventually.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { serveLiveView } from "../support/live-view-server.ts";

let harness: ClusterHarness;
let engine: Engine;
let server: LiveViewServer;
let browser: Browser;
/**
 * The backend's clock: a Cluster stays provisioning until the test moves it on (a loaded machine's page may lag
 * behind a provisioning of a few real seconds and never show it: run 34, 2026-11-30).
 */
const backendClock = new FakeClock(Date.now());
const PROVISION_MS = 2_000;

beforeAll(async () => {
  browser = await launchChromium();
  harness = await startClusterHarness();
  const view = new LiveViewModel();
  server = await serveLiveView(view);
  engine = new Engine({
    kubeConfig: harness.controlPlane.kubeConfig,
    providerName: harness.provider,
    environment: "test",
    // Provisioning until the test has seen it on the page (the backend's clock moves only when the test moves it).
    backend: new SimulatedBackend({ provisionDelayMs: PROVISION_MS, deleteDelayMs: 0, clock: backendClock }),
    kindSettings: buildingKindsTimed({ pollMs: 200, retryMs: 500, resyncMs: 60_000 }),
    observers: [view],
    // Sharded (a ring of one), so the page names the replica that owns what it shows.
    sharding: { namespace: "default", identity: "replica-a" },
  });
  view.setReplica("replica-a");
  view.watch("Cluster", engine.informers.of(CACHES.clusters));
  await engine.start();
});

afterAll(async () => {
  await browser?.close();
  await engine?.stop();
  await server?.close();
  await harness?.stop();
});

/** Opens the page, recording every request it makes and every error it reports. */
const openPage = () => openLiveView(browser, server.url);

/** Picks a resource in the table (it must be on the page shown); its detail panel then shows it. */
async function pick(page: Page, resource: string) {
  await page.locator(`#resources tbody tr[data-resource="${resource}"] a`).click({ timeout: 15_000 });
  return page.locator(`#detail[data-resource="${resource}"]`);
}

describe("the live view in headless Chromium", () => {
  it("shows a Cluster move to Ready on its statechart, with its conditions and transitions, offline", async () => {
    const { page, requests, errors } = await openPage();
    expect(await page.locator("#empty").isVisible()).toBe(true);

    await harness.createCluster("too-old", { kubernetes: { version: "1.20" } });
    await harness.createCluster("watched");
    const detail = await pick(page, "Cluster/clusters/watched");
    await detail.locator('g.state.current[data-state="provisioning"]').waitFor({ timeout: 15_000 });
    expect(await detail.getAttribute("data-phase")).toBe("Progressing");

    backendClock.advance(PROVISION_MS);
    await harness.waitFor("watched", isReady);
    await detail.locator('g.state.current[data-state="ready"]').waitFor({ timeout: 15_000 });
    await page
      .locator('#resources tbody tr[data-resource="Cluster/clusters/too-old"][data-state="failed"]')
      .waitFor({ timeout: 15_000 });
    await eventually(async () => expect(await detail.getAttribute("data-phase")).toBe("Ready"), {
      what: "the detail's phase Ready",
      timeoutMs: 10_000,
    });

    // The Cluster chart, drawn once, counts one resource in ready and one in failed.
    const chart = page.locator('#kinds section[data-kind="Cluster"]');
    expect(await page.locator("#kinds section.kind-chart").count()).toBe(1);
    await chart.locator('g.state[data-state="ready"][data-count="1"]').waitFor({ timeout: 10_000 });
    await chart.locator('g.state[data-state="failed"][data-count="1"]').waitFor({ timeout: 10_000 });
    expect(await chart.locator('g.state.empty[data-state="provisioning"]').count()).toBe(1);

    // Exactly one state highlighted; the arrow just taken marked.
    expect(await detail.locator("g.state.current").count()).toBe(1);
    expect(
      await detail.locator('path.transition.last[data-source="provisioning"][data-target="ready"]').count(),
    ).toBe(1);
    expect(await detail.locator("p.replica").textContent()).toContain("Owned by replica replica-a");
    // Conditions from the object, transitions from the runtime.
    const readyRow = detail.locator('tr[data-condition="ClusterReady"]');
    await eventually(async () => expect(await readyRow.locator("td").nth(1).textContent()).toBe("True"), {
      what: "the Ready condition True",
      timeoutMs: 10_000,
    });
    expect(await detail.locator('li[data-from="pending"][data-to="provisioning"]').count()).toBe(1);
    expect(await detail.locator('li[data-from="provisioning"][data-to="ready"]').count()).toBe(1);
    const table = await page.locator("#resources tbody").textContent();
    expect(table).toContain("Cluster clusters/watched");
    expect(table).toContain("UnsupportedVersion: Kubernetes 1.20 is not offered");
    expect(await page.locator("#page-status").textContent()).toBe("Showing 1–2 of 2");

    await screenshot(page, "live-view");

    // Nothing but this server was ever asked for anything, and the page reported no error.
    expectOnlyTheServerAsked(server.url, { requests, errors });
    await page.close();
  });

  it("drops a deleted Cluster from the page", async () => {
    const { page } = await openPage();
    const row = page.locator('#resources tbody tr[data-resource="Cluster/clusters/too-old"]');
    const detail = await pick(page, "Cluster/clusters/too-old");
    await detail.waitFor({ timeout: 10_000 });
    await harness.custom.deleteNamespacedCustomObject({
      group: "clusters.openmcp.cloud",
      version: "v1alpha1",
      plural: "clusters",
      namespace: harness.namespace,
      name: "too-old",
    });
    await row.waitFor({ state: "detached", timeout: 15_000 });
    await detail.waitFor({ state: "detached", timeout: 15_000 });
    await page
      .locator('#kinds section[data-kind="Cluster"] g.state.empty[data-state="failed"]')
      .waitFor({ timeout: 10_000 });
    await page.close();
  });
});
