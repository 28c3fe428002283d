/** The live view's one HTML page: styles, script and diagrams inline, nothing fetched from anywhere but its own server. */
import { createHash } from "node:crypto";

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
    .map(([id, svg]) => `<template data-machine="${escapeHtml(id)}">${svg.trim()}</template>`)
    .join("\n");
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeHtml(props.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header class="top">
<h1>${escapeHtml(props.title)}</h1>
<span id="connection" class="connection" data-status="connecting">connecting…</span>
<span class="note">read-only · updates live</span>
</header>
<main>
<section class="overview" aria-label="All resources">
<table id="overview"><thead><tr><th>Resource</th><th>State</th><th>Phase</th><th>Waiting on</th></tr></thead><tbody></tbody></table>
<p id="empty" class="empty">No resource interpreted yet: resources appear after their first reconcile.</p>
</section>
<div id="resources"></div>
</main>
${templates}
<script>${SCRIPT}</script>
</body>
</html>
`;
  const contentSecurityPolicy = [
    "default-src 'none'",
    `script-src '${sha256(SCRIPT)}'`,
    `style-src '${sha256(STYLE)}'`,
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

function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}

const STYLE = `
:root { --ink: #1b2432; --muted: #5b6678; --line: #d8dee8; --accent: #d9480f; --accent-soft: #fff1e6;
  --ok: #2b8a3e; --wait: #e67700; --gone: #868e96; font-family: system-ui, "DejaVu Sans", sans-serif; color: var(--ink); }
body { margin: 0; background: #f4f6f9; }
header.top { display: flex; align-items: baseline; gap: 1rem; padding: .8rem 1.2rem; background: #1b2432; color: #fff; }
header.top h1 { margin: 0; font-size: 1.15rem; font-weight: 600; }
.note { color: #aab4c3; font-size: .85rem; margin-left: auto; }
.connection { font-size: .85rem; padding: .1rem .5rem; border-radius: 1rem; background: #5b6678; }
.connection[data-status="live"] { background: var(--ok); }
.connection[data-status="reconnecting"] { background: var(--wait); }
main { padding: 1rem 1.2rem; display: grid; gap: 1rem; }
table { border-collapse: collapse; width: 100%; font-size: .86rem; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
.overview, .resource { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: .8rem 1rem; }
.overview a { color: inherit; }
.empty { color: var(--muted); margin: .5rem 0 0; }
.empty[hidden] { display: none; }
.resource header { display: flex; align-items: center; gap: .6rem; flex-wrap: wrap; }
.resource h2 { margin: 0; font-size: 1.05rem; }
.resource h2 .kind { color: var(--muted); font-weight: 500; }
.badge { font-size: .8rem; padding: .1rem .55rem; border-radius: 1rem; border: 1px solid var(--line); }
.badge.state { background: var(--accent-soft); border-color: var(--accent); color: #7a2a00; font-weight: 600; }
.badge.phase-Ready { background: #ebfbee; border-color: var(--ok); color: var(--ok); }
.badge.phase-Progressing { background: #fff9db; border-color: var(--wait); color: #8a4b00; }
.badge.phase-Terminating { background: #f1f3f5; border-color: var(--gone); color: #495057; }
.body { display: grid; grid-template-columns: minmax(320px, 1fr) minmax(300px, 560px); gap: 1rem; margin-top: .6rem; }
.facts h3 { font-size: .9rem; margin: .6rem 0 .3rem; color: var(--muted); }
.status-True { color: var(--ok); font-weight: 600; }
.status-False { color: var(--accent); font-weight: 600; }
.status-Unknown { color: var(--gone); font-weight: 600; }
ol.transitions { margin: 0; padding-left: 1.2rem; font-size: .86rem; }
ol.transitions li { margin: .15rem 0; }
ol.transitions .time { color: var(--muted); font-variant-numeric: tabular-nums; margin-right: .4rem; }
ol.transitions details { display: inline; }
ol.transitions summary { display: inline; cursor: pointer; color: var(--muted); }
ol.transitions code { display: block; white-space: pre-wrap; word-break: break-all; font-size: .75rem; background: #f8f9fa; padding: .3rem; }
.chart svg { width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; }
.chart g.state.current > rect:first-of-type { fill: var(--accent-soft); stroke: var(--accent); stroke-width: 4; }
.chart g.state.current text { fill: #7a2a00; }
.chart g.state.ancestor > rect:first-of-type { stroke: var(--accent); stroke-width: 2.5; stroke-dasharray: 8 5; }
.chart path.transition.last { stroke: var(--accent); stroke-width: 3; }
.none { color: var(--muted); font-size: .86rem; }
@media (max-width: 800px) { .body { grid-template-columns: 1fr; } }
`;

const SCRIPT = `
"use strict";
const templates = new Map();
for (const template of document.querySelectorAll("template[data-machine]")) templates.set(template.dataset.machine, template);
const cards = new Map();
const overviewRows = new Map();
const resources = new Map();
let copies = 0;

function element(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

function time(ms) {
  return new Date(ms).toLocaleTimeString([], { hour12: false });
}

async function chartFor(machine) {
  if (!templates.has(machine)) {
    const response = await fetch("charts/" + encodeURIComponent(machine));
    if (!response.ok) return undefined;
    const template = document.createElement("template");
    template.innerHTML = await response.text();
    templates.set(machine, template);
  }
  const svg = templates.get(machine).content.querySelector("svg").cloneNode(true);
  const suffix = "-" + ++copies;
  for (const node of svg.querySelectorAll("[id]")) node.id += suffix;
  for (const node of svg.querySelectorAll("[marker-end]")) {
    node.setAttribute("marker-end", node.getAttribute("marker-end").replace(/\\)$/, suffix + ")"));
  }
  svg.setAttribute("aria-labelledby", svg.getAttribute("aria-labelledby") + suffix);
  return svg;
}

function highlight(svg, resource) {
  const parts = resource.state.split(".");
  const ancestors = new Set(parts.slice(0, -1).map((_, index) => parts.slice(0, index + 1).join(".")));
  for (const group of svg.querySelectorAll("g.state")) {
    group.classList.toggle("current", group.dataset.state === resource.state);
    group.classList.toggle("ancestor", ancestors.has(group.dataset.state));
  }
  const last = resource.transitions[resource.transitions.length - 1];
  for (const path of svg.querySelectorAll("path.transition")) {
    path.classList.toggle("last", Boolean(last) && path.dataset.source === last.from && path.dataset.target === last.to);
  }
}

function waitingOn(resource) {
  const condition = resource.conditions.find((c) => c.status !== "True");
  return condition ? condition.reason + (condition.message ? ": " + condition.message : "") : "";
}

function label(resource) {
  return (resource.namespace ? resource.namespace + "/" : "") + resource.name;
}

function conditionsTable(resource) {
  if (resource.conditions.length === 0) return element("p", { class: "none" }, "No conditions yet.");
  const body = element("tbody");
  for (const c of resource.conditions) {
    body.append(element("tr", { "data-condition": c.type },
      element("td", {}, c.type),
      element("td", { class: "status-" + c.status }, c.status),
      element("td", {}, c.reason),
      element("td", {}, c.message),
      element("td", {}, c.lastTransitionTime ? time(Date.parse(c.lastTransitionTime)) : "")));
  }
  return element("table", { class: "conditions" },
    element("thead", {}, element("tr", {}, ...["Type", "Status", "Reason", "Message", "Since"].map((h) => element("th", {}, h)))),
    body);
}

function transitionsList(resource) {
  if (resource.transitions.length === 0) return element("p", { class: "none" }, "No transition since the view started.");
  const list = element("ol", { class: "transitions", reversed: "" });
  for (const t of [...resource.transitions].reverse()) {
    list.append(element("li", { "data-from": t.from, "data-to": t.to },
      element("span", { class: "time" }, time(t.at)),
      t.from + " \u2192 " + t.to + " ",
      element("details", {}, element("summary", {}, "on " + t.event), element("code", {}, t.facts))));
  }
  return list;
}

async function render(resource) {
  resources.set(resource.uid, resource);
  let card = cards.get(resource.uid);
  if (!card) {
    const id = "r-" + resource.uid;
    const state = element("span", { class: "badge state" });
    const phase = element("span", { class: "badge" });
    const facts = element("div", { class: "facts" });
    const chart = element("div", { class: "chart" });
    const root = element("section", { class: "resource", id, "data-resource": resource.kind + "/" + label(resource) },
      element("header", {}, element("h2", {}, element("span", { class: "kind" }, resource.kind + " "), label(resource)), state, phase),
      element("div", { class: "body" }, facts, chart));
    card = { root, state, phase, facts, chart, svg: undefined };
    cards.set(resource.uid, card);
    placeCard(resource, root);
    const svg = await chartFor(resource.machine);
    if (cards.get(resource.uid) !== card) return; // removed meanwhile
    card.svg = svg;
    if (svg) chart.append(svg);
    resource = resources.get(resource.uid) || resource;
  }
  card.root.dataset.state = resource.state;
  card.root.dataset.phase = resource.phase || "";
  card.state.textContent = resource.state;
  card.phase.textContent = resource.phase || "no phase";
  card.phase.className = "badge phase-" + (resource.phase || "none");
  card.facts.replaceChildren(
    element("h3", {}, "Conditions"), conditionsTable(resource),
    element("h3", {}, "Recent transitions"), transitionsList(resource));
  if (card.svg) highlight(card.svg, resource);
  renderOverview(resource);
}

function order(resource) {
  return resource.kind + "\\u0000" + resource.namespace + "\\u0000" + resource.name;
}

function byOrder(a, b) {
  return order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0;
}

function placeCard(resource, root) {
  const container = document.getElementById("resources");
  const next = [...resources.values()]
    .filter((other) => other.uid !== resource.uid && byOrder(other, resource) > 0 && cards.has(other.uid))
    .sort(byOrder)[0];
  container.insertBefore(root, next ? cards.get(next.uid).root : null);
}

function renderOverview(resource) {
  const body = document.querySelector("#overview tbody");
  let row = overviewRows.get(resource.uid);
  if (!row) {
    row = element("tr", { "data-uid": resource.uid });
    overviewRows.set(resource.uid, row);
  }
  row.replaceChildren(
    element("td", {}, element("a", { href: "#r-" + resource.uid }, resource.kind + " " + label(resource))),
    element("td", {}, resource.state),
    element("td", {}, resource.phase || ""),
    element("td", {}, waitingOn(resource)));
  const rows = [...resources.values()].sort(byOrder);
  body.replaceChildren(...rows.map((r) => overviewRows.get(r.uid)).filter(Boolean));
  document.getElementById("empty").hidden = rows.length > 0;
}

function remove(uid) {
  resources.delete(uid);
  cards.get(uid)?.root.remove();
  cards.delete(uid);
  overviewRows.get(uid)?.remove();
  overviewRows.delete(uid);
  document.getElementById("empty").hidden = resources.size > 0;
}

function connection(status, text) {
  const badge = document.getElementById("connection");
  badge.dataset.status = status;
  badge.textContent = text;
}

const source = new EventSource("events");
source.onopen = () => connection("live", "live");
source.onerror = () => connection("reconnecting", "reconnecting…");
source.addEventListener("snapshot", (event) => {
  const shown = JSON.parse(event.data).resources;
  const uids = new Set(shown.map((resource) => resource.uid));
  for (const uid of [...resources.keys()]) if (!uids.has(uid)) remove(uid);
  for (const resource of shown) render(resource);
});
source.addEventListener("resource", (event) => render(JSON.parse(event.data)));
source.addEventListener("removed", (event) => remove(JSON.parse(event.data).uid));
`;
