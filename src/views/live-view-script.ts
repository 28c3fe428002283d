/** The live view page's script, inlined and allowed by its hash (see live-view-page.ts); plain browser JavaScript. */

export const LIVE_VIEW_SCRIPT = `
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
