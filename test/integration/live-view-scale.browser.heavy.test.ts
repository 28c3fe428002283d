import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MACHINE_KINDS } from "../../src/runtime/kinds/registry.ts";
import type { InterpretedStep } from "../../src/runtime/machine-observer.ts";
import { type LiveResource, LiveViewModel } from "../../src/views/live-view-model.ts";
import type { LiveViewServer } from "../../src/views/live-view-server.ts";
import { expectOnlyTheServerAsked, launchChromium, openLiveView, screenshot } from "../support/chromium.ts";
import { eventually } from "../support/eventually.ts";
import { serveLiveView } from "../support/live-view-server.ts";

const clusterKind = MACHINE_KINDS.find((kind) => kind.definition.kind === "Cluster");
if (!clusterKind) throw new Error("no Cluster kind in the registry");
const machine = clusterKind.definition.machine;
/** Rows per page of the table (the page's PAGE_SIZE). */
const PAGE_SIZE = 50;
/** The page's elements may not exceed this, however many resources there are. */
const DOM_BOUND = 3_000;

/** Where resource `i` starts, by `i % 10`: of 1,000, 200 pending, 300 provisioning, 100 failed, … */
const INITIAL_STATES = [
  "pending",
  "pending",
  "provisioning",
  "provisioning",
  "provisioning",
  "ready",
  "ready",
  "failed",
  "deleting.releasing",
  "deleting.releasing",
];

function step(i: number, before: string, after: string): InterpretedStep {
  return {
    kind: "Cluster",
    uid: `uid-${i}`,
    namespace: `team-${i % 7}`,
    name: `cluster-${String(i).padStart(4, "0")}`,
    machine,
    event: { type: "observed" },
    before,
    after,
    at: 1_700_000_000_000 + i,
  };
}

/** Adds resources `from` up to (not including) `to`, each in its initial state. */
function create(from: number, to: number): void {
  for (let i = from; i < to; i++) view.stepped(step(i, "pending", INITIAL_STATES[i % 10] ?? "pending"));
}

/** How many resources each state of the Cluster chart holds, counting those inside a compound state too. */
function expectedCounts(shown: readonly LiveResource[], states: readonly string[]): Record<string, number> {
  const inside = (state: string, outer: string) => state === outer || state.startsWith(`${outer}.`);
  return Object.fromEntries(
    states.map((outer) => [outer, shown.filter((resource) => inside(resource.state, outer)).length]),
  );
}

let view: LiveViewModel;
let server: LiveViewServer;
let browser: Browser;

beforeAll(async () => {
  view = new LiveViewModel();
  server = await serveLiveView(view);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const cluster = (page: Page) => page.locator('#kinds section[data-kind="Cluster"]');
const status = (page: Page) => page.locator("#page-status");
const rows = (page: Page) => page.locator("#resources tbody tr");
const elementCount = (page: Page) => page.evaluate<number>("document.getElementsByTagName('*').length");

/** The count each state of the Cluster chart shows, by state. */
async function shownCounts(page: Page): Promise<Record<string, number>> {
  const pairs = await cluster(page)
    .locator("g.state")
    .evaluateAll((groups) =>
      groups.map((group) => [group.getAttribute("data-state"), Number(group.getAttribute("data-count"))]),
    );
  return Object.fromEntries(pairs);
}

async function waitForStatus(page: Page, text: string): Promise<void> {
  await eventually(async () => expect(await status(page).textContent()).toBe(text), {
    what: `the table's status "${text}"`,
    timeoutMs: 10_000,
  });
}

describe("the live view with 1,000 Clusters", () => {
  it("counts them per state, pages and filters the table, stays live, and keeps its DOM bounded", async () => {
    create(0, 100);
    const { page, requests, errors } = await openLiveView(browser, server.url);
    await waitForStatus(page, "Showing 1–50 of 100");
    const elementsAt100 = await elementCount(page);

    // 900 more arrive as a burst of events while the page is open: drawn in a few renders, not 900.
    await page.evaluate(`
      window.tableRenders = 0;
      new MutationObserver((records) => { window.tableRenders += records.length; })
        .observe(document.querySelector("#resources tbody"), { childList: true });
    `);
    create(100, 1_000);
    await waitForStatus(page, "Showing 1–50 of 1,000");
    expect(await page.evaluate<number>("window.tableRenders")).toBeLessThan(100);

    // The counts on the chart: they add up to 1,000 (leaf states) and match the data, compound states included.
    const states = Object.keys(await shownCounts(page));
    expect(states).toEqual(expect.arrayContaining(["pending", "ready", "failed", "deleting.releasing"]));
    await eventually(
      async () => expect(await shownCounts(page)).toEqual(expectedCounts(view.resources(), states)),
      {
        what: "the counts of every state",
      },
    );
    const counts = await shownCounts(page);
    const leaves = states.filter((state) => !states.some((other) => other.startsWith(`${state}.`)));
    expect(leaves.reduce((sum, state) => sum + (counts[state] ?? 0), 0)).toBe(1_000);
    expect(counts).toMatchObject({ pending: 200, provisioning: 300, ready: 200, failed: 100, deleting: 200 });
    // States without a resource are dimmed.
    expect(await cluster(page).locator('g.state.empty[data-state="updating"]').count()).toBe(1);
    expect(await cluster(page).locator('g.state.empty[data-state="ready"]').count()).toBe(0);

    // One page of rows, in the order of the data; the DOM no bigger than with 100 resources.
    const sorted = view.resources();
    expect(await rows(page).count()).toBe(PAGE_SIZE);
    expect(await rows(page).first().getAttribute("data-uid")).toBe(sorted[0]?.uid);
    const elementsAt1000 = await elementCount(page);
    expect(elementsAt1000).toBeLessThan(DOM_BOUND);
    expect(Math.abs(elementsAt1000 - elementsAt100)).toBeLessThan(50);

    // Paging.
    await page.locator("#next").click();
    await waitForStatus(page, "Showing 51–100 of 1,000");
    expect(await rows(page).first().getAttribute("data-uid")).toBe(sorted[50]?.uid);
    expect(await rows(page).count()).toBe(PAGE_SIZE);
    await page.locator("#previous").click();
    await waitForStatus(page, "Showing 1–50 of 1,000");
    expect(await page.locator("#previous").isDisabled()).toBe(true);

    // Filtering: a click on a state, then text on namespace/name, then the state select.
    await cluster(page).locator('g.state[data-state="failed"]').click();
    await waitForStatus(page, "Showing 1–50 of 100 matching (1,000 in all)");
    expect(await page.locator("#filter-state").inputValue()).toBe("failed");
    expect(await page.locator('#resources tbody tr:not([data-state="failed"])').count()).toBe(0);
    await page.locator("#next").click();
    await waitForStatus(page, "Showing 51–100 of 100 matching (1,000 in all)");
    expect(await page.locator("#next").isDisabled()).toBe(true);
    await page.locator("#filter-text").fill("team-3/");
    const failedInTeam3 = sorted.filter((r) => r.state === "failed" && r.namespace === "team-3").length;
    await waitForStatus(page, `Showing 1–${failedInTeam3} of ${failedInTeam3} matching (1,000 in all)`);
    await page.locator("#filter-text").fill("cluster-0042");
    await waitForStatus(page, "No resource matches (1,000 in all).");
    await page.locator("#filter-state").selectOption("provisioning");
    await waitForStatus(page, "Showing 1–1 of 1 matching (1,000 in all)");
    expect(await rows(page).getAttribute("data-resource")).toBe("Cluster/team-0/cluster-0042");
    // The deleting compound state holds its nested states.
    await page.locator("#filter-text").fill("");
    await cluster(page).locator('g.state[data-state="deleting"]').click();
    await waitForStatus(page, "Showing 1–50 of 200 matching (1,000 in all)");

    // Pick one resource: the detail panel shows it on its statechart.
    await page.locator("#filter-state").selectOption("pending");
    await waitForStatus(page, "Showing 1–50 of 200 matching (1,000 in all)");
    const first = rows(page).first();
    const pickedId = (await first.getAttribute("data-resource")) ?? "";
    const pickedUid = (await first.getAttribute("data-uid")) ?? "";
    await first.locator("a").click();
    const detail = page.locator(`#detail[data-resource="${pickedId}"]`);
    await detail.locator('g.state.current[data-state="pending"]').waitFor({ timeout: 10_000 });
    expect(await rows(page).first().getAttribute("class")).toContain("picked");

    // Live: ten pending Clusters move to provisioning, the picked one among them.
    const moved = sorted.filter((r) => r.state === "pending").slice(0, 10);
    expect(moved.map((r) => r.uid)).toContain(pickedUid);
    for (const resource of moved)
      view.stepped(step(Number(resource.uid.replace("uid-", "")), "pending", "provisioning"));
    await waitForStatus(page, "Showing 1–50 of 190 matching (1,000 in all)");
    await eventually(
      async () => expect(await shownCounts(page)).toMatchObject({ pending: 190, provisioning: 310 }),
      { what: "the counts after the move" },
    );
    expect(await shownCounts(page)).toEqual(expectedCounts(view.resources(), states));
    expect(await page.locator(`#resources tbody tr[data-uid="${pickedUid}"]`).count()).toBe(0);
    await detail.locator('g.state.current[data-state="provisioning"]').waitFor({ timeout: 10_000 });
    expect(
      await detail.locator('path.transition.last[data-source="pending"][data-target="provisioning"]').count(),
    ).toBe(1);
    expect(await detail.locator('li[data-from="pending"][data-to="provisioning"]').count()).toBe(1);
    await page.locator("#filter-state").selectOption("provisioning");
    await waitForStatus(page, "Showing 1–50 of 310 matching (1,000 in all)");

    // Gone ones leave the counts and the table.
    for (const resource of moved) view.removed("Cluster", resource.uid);
    await waitForStatus(page, "Showing 1–50 of 300 matching (990 in all)");
    await eventually(async () => expect(await shownCounts(page)).toMatchObject({ provisioning: 300 }), {
      what: "the counts after the removal",
    });
    await page.locator("#detail:not([data-resource])").waitFor({ timeout: 10_000 });
    expect(await elementCount(page)).toBeLessThan(DOM_BOUND);

    await screenshot(page, "live-view-scale");
    expectOnlyTheServerAsked(server.url, { requests, errors });
    await page.close();
  });

  it("draws the 1,000 from the snapshot when a page opens after them", async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    await page.goto(server.url);
    await waitForStatus(page, "Showing 1–50 of 990");
    expect(await rows(page).count()).toBe(PAGE_SIZE);
    expect(await elementCount(page)).toBeLessThan(DOM_BOUND);
    const shown = (await (await fetch(new URL("resources", server.url))).json()) as { resources: unknown[] };
    expect(shown.resources).toHaveLength(990);
    await page.close();
  });
});
