/** The headless Chromium the browser tests drive, and where they leave their screenshots. */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { expect } from "vitest";

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
/** Screenshots go here (ignored by git), for a person to look at after a run. */
export const ARTIFACTS = join(import.meta.dirname, "..", "..", "test-results");

/** Starts Chromium, or fails saying how to install it. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `The browser tests need Chromium at ${CHROMIUM}, which does not exist. Install it with ` +
        "`hack/browser/ensure-chromium.sh` (on Debian/Ubuntu as root: `apt-get install -y chromium`; npm test " +
        "runs the script first), or point OPENMCP_CHROMIUM at a Chromium or Chrome executable.",
    );
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}

/** Opens `url` once its event stream is live, recording every request the page makes and every error it reports. */
export async function openLiveView(
  browser: Browser,
  url: string,
): Promise<{ page: Page; requests: string[]; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  const requests: string[] = [];
  const errors: string[] = [];
  page.on("request", (request) => requests.push(request.url()));
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  await page.goto(url);
  await page.locator('#connection[data-status="live"]').waitFor({ timeout: 10_000 });
  return { page, requests, errors };
}

/** Checks that a page of {@link openLiveView} asked nothing but `serverUrl` for anything and reported no error. */
export function expectOnlyTheServerAsked(
  serverUrl: string,
  opened: { readonly requests: readonly string[]; readonly errors: readonly string[] },
): void {
  const origin = new URL(serverUrl).origin;
  expect(opened.requests.filter((url) => !url.startsWith(origin))).toEqual([]);
  expect(opened.errors).toEqual([]);
}

/** Leaves a full-page screenshot of `page` in {@link ARTIFACTS} as `<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}
