/**
 * The live view's one HTML page: each kind's statechart with a count per state, a filtered and paged table
 * of the resources, and the detail of the one picked. Styles, script and diagrams inline, nothing fetched
 * from anywhere but its own server.
 */
import { createHash } from "node:crypto";
import { escapeXml } from "../statecharts/svg.ts";
import { LIVE_VIEW_SCRIPT } from "./live-view-script.ts";
import { LIVE_VIEW_STYLE } from "./live-view-style.ts";

/** What goes into the page. */
export interface LiveViewPageProps {
  /** Shown in the title and the header. */
  readonly title: string;
  /** The SVG diagram of each machine, by machine id (highlighted in the browser by `data-state`). */
  readonly charts: ReadonlyMap<string, string>;
}

/** The page and the Content-Security-Policy that lets its inline style and script run, and nothing else. */
export interface LiveViewPage {
  readonly html: string;
  readonly contentSecurityPolicy: string;
}

/** Builds the page; the same input gives the same bytes. */
export function liveViewPage(props: LiveViewPageProps): LiveViewPage {
  const templates = [...props.charts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, svg]) => `<template data-machine="${escapeXml(id)}">${svg.trim()}</template>`)
    .join("\n");
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeXml(props.title)}</title>
<style>${LIVE_VIEW_STYLE}</style>
</head>
<body>
<header class="top">
<h1>${escapeXml(props.title)}</h1>
<span id="connection" class="connection" data-status="connecting">connecting…</span>
<span class="note">read-only · updates live</span>
</header>
<main>
<p id="empty" class="empty">No resource interpreted yet: resources appear after their first reconcile.</p>
<section id="kinds" class="kinds" aria-label="How many resources are in each state, per kind"></section>
<div class="split">
<section class="list" aria-label="Resources">
<div class="filters" role="search">
<label>Kind <select id="filter-kind"></select></label>
<label>State <select id="filter-state"></select></label>
<label>Name <input id="filter-text" type="search" placeholder="namespace/name contains…" autocomplete="off"></label>
</div>
<table id="resources"><thead><tr><th>Resource</th><th>State</th><th>Phase</th><th>Waiting on</th></tr></thead><tbody></tbody></table>
<nav class="pager" aria-label="Pages"><button id="previous" type="button">← Previous</button><span id="page-status" aria-live="polite"></span><button id="next" type="button">Next →</button></nav>
</section>
<section id="detail" class="resource" aria-label="The picked resource"></section>
</div>
</main>
${templates}
<script>${LIVE_VIEW_SCRIPT}</script>
</body>
</html>
`;
  const contentSecurityPolicy = [
    "default-src 'none'",
    `script-src '${sha256(LIVE_VIEW_SCRIPT)}'`,
    `style-src '${sha256(LIVE_VIEW_STYLE)}'`,
    "connect-src 'self'",
    "img-src data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  return { html, contentSecurityPolicy };
}

function sha256(text: string): string {
  return `sha256-${createHash("sha256").update(text, "utf8").digest("base64")}`;
}
