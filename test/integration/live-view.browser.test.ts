/** The live view in real headless Chromium: a Cluster moving to Ready is seen on its statechart; a screenshot is kept. */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { Engine } from "../../src/runtime/engine.ts";
import { MACHINE_KINDS } from "../../src/runtime/kinds/registry.ts";
import { silentLogger } from "../../src/runtime/logger.ts";
import { LiveViewModel } from "../../src/views/live-view-model.ts";
import { type LiveViewServer, startLiveViewServer } from "../../src/views/live-view-server.ts";
import { type ClusterHarness, isReady, startClusterHarness } from "../support/cluster-harness.ts";
import { eventually } from "../support/eventually.ts";

/** Debian's Chromium (`hack/browser/ensure-chromium.sh` installs it before `npm test`); override for other systems. */
const CHROMIUM = process.env.OPENMCP_CHROMIUM ?? "/usr/bin/chromium";
const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
const ARTIFACTS = join(import.meta.dirname, "..", "..", "test-results");

let harness: ClusterHarness;
let engine: Engine;
let server: LiveViewServer;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `The live view test needs Chromium at ${CHROMIUM}, which does not exist. Install it with ` +
        "`hack/browser/ensure-chromium.sh` (on Debian/Ubuntu as root: `apt-get install -y chromium`; npm test " +
        "runs the script first), or point OPENMCP_CHROMIUM at a Chromium or Chrome executable.",
    );
  }
  harness = await startClusterHarness();
  const view = new LiveViewModel();
  server = await startLiveViewServer({
    host: "127.0.0.1",
    port: 0,
    view,
    machines: MACHINE_KINDS.map((kind) => kind.definition.machine),
    log: silentLogger,
  });
  engine = new Engine({
    kubeConfig: harness.controlPlane.kubeConfig,
    providerName: harness.provider,
    environment: "test",
    // Slow enough that the page shows provisioning before ready.
    backend: new SimulatedBackend({ provisionDelayMs: 2_000 }),
    timing: { pollMs: 200, retryMs: 500, resyncMs: 60_000 },
    observers: [view],
  });
  view.watch("Cluster", engine.informers.clusters);
  await engine.start();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
});

afterAll(async () => {
  await browser?.close();
  await engine?.stop();
  await server?.close();
  await harness?.stop();
});

/** Opens the page, recording every request it makes and every error it reports. */
async function openPage(): Promise<{ page: Page; requests: string[]; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  const requests: string[] = [];
  const errors: string[] = [];
  page.on("request", (request) => requests.push(request.url()));
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  await page.goto(server.url);
  await page.locator('#connection[data-status="live"]').waitFor({ timeout: 10_000 });
  return { page, requests, errors };
}

describe("the live view in headless Chromium", () => {
  it("shows a Cluster move to Ready on its statechart, with its conditions and transitions, offline", async () => {
    const { page, requests, errors } = await openPage();
    expect(await page.locator("#empty").isVisible()).toBe(true);

    await harness.createCluster("too-old", { kubernetes: { version: "1.20" } });
    await harness.createCluster("watched");
    const card = page.locator('section.resource[data-resource="Cluster/clusters/watched"]');
    await card.locator('g.state.current[data-state="provisioning"]').waitFor({ timeout: 15_000 });
    expect(await card.getAttribute("data-phase")).toBe("Progressing");

    await harness.waitFor("watched", isReady);
    await card.locator('g.state.current[data-state="ready"]').waitFor({ timeout: 15_000 });
    await page.locator('section.resource[data-state="failed"]').waitFor({ timeout: 15_000 });
    await eventually(async () => expect(await card.getAttribute("data-phase")).toBe("Ready"), {
      what: "the card's phase Ready",
      timeoutMs: 10_000,
    });

    // Exactly one state highlighted; the arrow just taken marked.
    expect(await card.locator("g.state.current").count()).toBe(1);
    expect(
      await card.locator('path.transition.last[data-source="provisioning"][data-target="ready"]').count(),
    ).toBe(1);
    // Conditions from the object, transitions from the runtime.
    const readyRow = card.locator('tr[data-condition="ClusterReady"]');
    await eventually(async () => expect(await readyRow.locator("td").nth(1).textContent()).toBe("True"), {
      what: "the Ready condition True",
      timeoutMs: 10_000,
    });
    expect(await card.locator('li[data-from="pending"][data-to="provisioning"]').count()).toBe(1);
    expect(await card.locator('li[data-from="provisioning"][data-to="ready"]').count()).toBe(1);
    const overview = await page.locator("#overview tbody").textContent();
    expect(overview).toContain("Cluster clusters/watched");
    expect(overview).toContain("UnsupportedVersion: Kubernetes 1.20 is not offered");

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "live-view.png"), fullPage: true });

    // Nothing but this server was ever asked for anything, and the page reported no error.
    const origin = new URL(server.url).origin;
    expect(requests.filter((url) => !url.startsWith(origin))).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("drops a deleted Cluster from the page", async () => {
    const { page } = await openPage();
    const card = page.locator('section.resource[data-resource="Cluster/clusters/too-old"]');
    await card.waitFor({ timeout: 10_000 });
    await harness.custom.deleteNamespacedCustomObject({
      group: "clusters.openmcp.cloud",
      version: "v1alpha1",
      plural: "clusters",
      namespace: harness.namespace,
      name: "too-old",
    });
    await card.waitFor({ state: "detached", timeout: 15_000 });
    await page.close();
  });
});
