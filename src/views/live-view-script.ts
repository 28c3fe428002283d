/** The live view page's script, inlined and allowed by its hash (see live-view-page.ts); plain browser JavaScript. */

/**
 * Resources live here as plain data (a Map by uid); the DOM holds one statechart per kind with a count on
 * each state, one page of the table and one detail panel, so the page is as big with 10,000 resources as
 * with 10. Events only change the data and ask for a render; renders run at most every RENDER_EVERY_MS, so
 * a burst of a thousand events costs one render, not a thousand.
 */
export const LIVE_VIEW_SCRIPT = `
"use strict";
const PAGE_SIZE = 50;
const RENDER_EVERY_MS = 150;

const resources = new Map(); // uid -> resource, every one the server told of
let order; // uids in table order; undefined when resources came or went since the last render
const filter = { kind: "", state: "", text: "" };
let pageIndex = 0;
let picked = pickedInUrl(); // "Kind/namespace/name" of the resource in the detail panel
let renderTimer;

const templates = new Map(); // machine id -> <template> holding its SVG
for (const template of document.querySelectorAll("template[data-machine]")) templates.set(template.dataset.machine, template);
const fetching = new Set();
const kindCharts = new Map(); // kind -> { root, total, states: [g.state] }
let rows = new Map(); // uid -> { row, resource } of the rows on the page
let detail = { id: "", resource: undefined, machine: "", svg: undefined, parts: undefined };
let copies = 0;

/** The resource the URL's #fragment names: picking one is a link, so it survives a reload and can be shared. */
function pickedInUrl() {
  try {
    return decodeURI(location.hash.slice(1));
  } catch {
    return ""; // a fragment typed by hand that is not a resource
  }
}

function element(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

function svgElement(tag, attributes) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  return node;
}

function time(ms) {
  return new Date(ms).toLocaleTimeString([], { hour12: false });
}

function count(n) {
  return n.toLocaleString("en-US");
}

/** The object's key as the engine writes it (objectKey in src/api/object-key.ts): namespace/name, or name. */
function label(resource) {
  return (resource.namespace ? resource.namespace + "/" : "") + resource.name;
}

/** What a person calls the resource, and what the URL's #fragment holds when it is picked. */
function idOf(resource) {
  return resource.kind + "/" + label(resource);
}

function waitingOn(resource) {
  const condition = resource.conditions.find((c) => c.status !== "True");
  return condition ? condition.reason + (condition.message ? ": " + condition.message : "") : "";
}

/** A fresh copy of a machine's diagram, its ids made unique on the page; undefined until it arrived. */
function chartOf(machine) {
  const template = templates.get(machine);
  if (!template) {
    // Machines first seen after the page was built: their diagram comes from the server once.
    if (!fetching.has(machine)) {
      fetching.add(machine);
      fetch("charts/" + encodeURIComponent(machine))
        .then((response) => (response.ok ? response.text() : Promise.reject(new Error(response.statusText))))
        .then((svg) => {
          const fetched = document.createElement("template");
          fetched.innerHTML = svg;
          templates.set(machine, fetched);
          scheduleRender();
        })
        .catch(() => fetching.delete(machine));
    }
    return undefined;
  }
  const svg = template.content.querySelector("svg").cloneNode(true);
  const suffix = "-" + ++copies;
  for (const node of svg.querySelectorAll("[id]")) node.id += suffix;
  for (const node of svg.querySelectorAll("[marker-end]")) {
    node.setAttribute("marker-end", node.getAttribute("marker-end").replace(/\\)$/, suffix + ")"));
  }
  svg.setAttribute("aria-labelledby", svg.getAttribute("aria-labelledby") + suffix);
  return svg;
}

function statesOf(machine) {
  const template = templates.get(machine);
  return template ? [...template.content.querySelectorAll("g.state")].map((group) => group.dataset.state) : [];
}

/** Whether a resource in \`state\` is in \`shown\`: itself, or inside it when \`shown\` is a compound state. */
function within(state, shown) {
  return state === shown || state.startsWith(shown + ".");
}

// ---- The overview: each kind's statechart once, with how many resources are in each state.

function kindChart(kind, machine) {
  const svg = chartOf(machine);
  if (!svg) return undefined;
  const total = element("span", { class: "total" });
  const root = element("section", { class: "kind-chart", "data-kind": kind, "data-machine": machine },
    element("h2", {}, kind + " ", total),
    element("div", { class: "chart" }, svg));
  const states = [...svg.querySelectorAll("g.state")];
  for (const group of states) {
    group.setAttribute("tabindex", "0");
    group.setAttribute("role", "button");
    group.append(countBadge(group));
  }
  return { root, total, states };
}

/** A pill at the top right corner of the state's box; its width follows the number. */
function countBadge(group) {
  const box = group.querySelector("rect");
  const right = Number(box.getAttribute("x")) + Number(box.getAttribute("width"));
  const top = Number(box.getAttribute("y"));
  const badge = svgElement("g", { class: "count", "data-right": right });
  badge.append(
    svgElement("rect", { x: right - 20, y: top - 15, width: 40, height: 30, rx: 15 }),
    svgElement("text", { x: right, y: top + 7, "text-anchor": "middle", "font-size": 20, "font-weight": "bold" }));
  return badge;
}

function setCount(group, n) {
  if (group.dataset.count === String(n)) return;
  group.dataset.count = String(n);
  group.classList.toggle("empty", n === 0);
  const badge = group.querySelector("g.count");
  const text = count(n);
  const width = 18 + 11.5 * text.length;
  const right = Number(badge.dataset.right);
  badge.querySelector("rect").setAttribute("x", String(right - width / 2));
  badge.querySelector("rect").setAttribute("width", String(width));
  badge.querySelector("text").textContent = text;
  group.setAttribute("aria-label", group.dataset.state + ": " + text + " — show them in the table");
}

function renderKinds() {
  const tallies = new Map(); // kind -> { machine, total, byState }
  for (const resource of resources.values()) {
    let tally = tallies.get(resource.kind);
    if (!tally) {
      tally = { machine: resource.machine, total: 0, byState: new Map() };
      tallies.set(resource.kind, tally);
    }
    tally.total++;
    // deleting.releasing counts for deleting too: a compound state shows everything inside it.
    const parts = resource.state.split(".");
    for (let depth = 1; depth <= parts.length; depth++) {
      const state = parts.slice(0, depth).join(".");
      tally.byState.set(state, (tally.byState.get(state) || 0) + 1);
    }
  }
  let added = false;
  for (const [kind, tally] of tallies) {
    if (kindCharts.has(kind)) continue;
    const chart = kindChart(kind, tally.machine);
    if (!chart) continue;
    kindCharts.set(kind, chart);
    added = true;
  }
  if (added) {
    const sorted = [...kindCharts.keys()].sort().map((kind) => kindCharts.get(kind).root);
    document.getElementById("kinds").replaceChildren(...sorted);
  }
  // A kind whose last resource went stays, all zeros: the chart does not jump away under the reader.
  for (const [kind, chart] of kindCharts) {
    const tally = tallies.get(kind) || { total: 0, byState: new Map() };
    chart.total.textContent = count(tally.total) + (tally.total === 1 ? " resource" : " resources");
    for (const group of chart.states) {
      setCount(group, tally.byState.get(group.dataset.state) || 0);
      group.classList.toggle("picked", filter.kind === kind && filter.state === group.dataset.state);
    }
  }
}

// ---- The filters and the table: one page of the resources that match.

function matches(resource) {
  if (filter.kind && resource.kind !== filter.kind) return false;
  if (filter.state && !within(resource.state, filter.state)) return false;
  return !filter.text || label(resource).toLowerCase().includes(filter.text);
}

/** The states the state filter offers: those of the filtered kind's machine, or of every kind shown. */
function offeredStates() {
  const machines = [...kindCharts.values()]
    .filter((chart) => !filter.kind || chart.root.dataset.kind === filter.kind)
    .map((chart) => chart.root.dataset.machine);
  return [...new Set(machines.flatMap(statesOf))];
}

/** Offers "" (shown as \`none\`) and \`values\`, rebuilding the options only when they changed; selects \`value\`. */
function setOptions(select, values, none, value) {
  const wanted = ["", ...values];
  const current = [...select.options].map((option) => option.value);
  if (wanted.join("\\n") !== current.join("\\n")) {
    select.replaceChildren(...wanted.map((value) => element("option", { value }, value || none)));
  }
  select.value = wanted.includes(value) ? value : "";
}

function renderFilters() {
  setOptions(document.getElementById("filter-kind"), [...kindCharts.keys()].sort(), "all kinds", filter.kind);
  const offered = offeredStates();
  // A state picked on a chart stays offered even before its kind's chart arrived.
  if (filter.state && !offered.includes(filter.state)) offered.push(filter.state);
  setOptions(document.getElementById("filter-state"), offered, "any state", filter.state);
}

function tableRow(resource) {
  const id = idOf(resource);
  return element("tr", { "data-uid": resource.uid, "data-resource": id, "data-state": resource.state },
    element("td", {}, element("a", { href: "#" + encodeURI(id) }, resource.kind + " " + label(resource))),
    element("td", {}, resource.state),
    element("td", {}, resource.phase || ""),
    element("td", {}, waitingOn(resource)));
}

function renderTable() {
  if (!order) {
    const keys = new Map([...resources.values()].map((resource) => [resource.uid, idOf(resource)]));
    order = [...keys.keys()].sort((a, b) => (keys.get(a) < keys.get(b) ? -1 : keys.get(a) > keys.get(b) ? 1 : 0));
  }
  const matching = [];
  for (const uid of order) {
    const resource = resources.get(uid);
    if (resource && matches(resource)) matching.push(resource);
  }
  const pages = Math.max(1, Math.ceil(matching.length / PAGE_SIZE));
  pageIndex = Math.min(pageIndex, pages - 1);
  const first = pageIndex * PAGE_SIZE;
  const shown = matching.slice(first, first + PAGE_SIZE);

  // A row is rebuilt only when its resource changed, and the body touched only when its rows did.
  const next = new Map();
  const trs = shown.map((resource) => {
    const kept = rows.get(resource.uid);
    const entry = kept && kept.resource === resource ? kept : { row: tableRow(resource), resource };
    entry.row.classList.toggle("picked", idOf(resource) === picked);
    next.set(resource.uid, entry);
    return entry.row;
  });
  rows = next;
  const body = document.querySelector("#resources tbody");
  if (trs.length !== body.children.length || trs.some((tr, index) => body.children[index] !== tr)) {
    body.replaceChildren(...trs);
  }

  const all = resources.size;
  let status = "";
  if (matching.length > 0) {
    status = "Showing " + count(first + 1) + "\u2013" + count(first + shown.length) + " of " + count(matching.length);
    if (matching.length !== all) status += " matching (" + count(all) + " in all)";
  } else if (all > 0) {
    status = "No resource matches (" + count(all) + " in all).";
  }
  document.getElementById("page-status").textContent = status;
  document.getElementById("previous").disabled = pageIndex === 0;
  document.getElementById("next").disabled = pageIndex >= pages - 1;
}

// ---- The detail of the picked resource: its conditions, its transitions, and where it is on its statechart.

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

function findPicked() {
  if (!picked) return undefined;
  for (const resource of resources.values()) if (idOf(resource) === picked) return resource;
  return undefined;
}

function renderDetail() {
  const section = document.getElementById("detail");
  const resource = findPicked();
  if (!resource) {
    if (detail.id === picked && !detail.resource && section.childElementCount > 0) return;
    for (const name of ["resource", "state", "phase"]) delete section.dataset[name];
    const note = picked
      ? picked + " is not shown: not interpreted yet, or gone."
      : "Pick a resource in the table to see its conditions, its recent transitions and where it is on its statechart.";
    section.replaceChildren(element("p", { class: "none" }, note));
    detail = { id: picked, resource: undefined, machine: "", svg: undefined, parts: undefined };
    return;
  }
  if (detail.id === picked && detail.resource === resource && detail.svg) return;
  if (detail.id !== picked || detail.machine !== resource.machine || !detail.svg) {
    const parts = {
      state: element("span", { class: "badge state" }),
      phase: element("span", { class: "badge" }),
      facts: element("div", { class: "facts" }),
    };
    const svg = chartOf(resource.machine);
    section.replaceChildren(
      element("header", {},
        element("h2", {}, element("span", { class: "kind" }, resource.kind + " "), label(resource)),
        parts.state, parts.phase),
      element("div", { class: "body" }, parts.facts, element("div", { class: "chart" }, svg || "")));
    detail = { id: picked, resource: undefined, machine: resource.machine, svg, parts };
  }
  section.dataset.resource = picked;
  section.dataset.state = resource.state;
  section.dataset.phase = resource.phase || "";
  detail.parts.state.textContent = resource.state;
  detail.parts.phase.textContent = resource.phase || "no phase";
  detail.parts.phase.className = "badge phase-" + (resource.phase || "none");
  detail.parts.facts.replaceChildren(
    ...(resource.replica ? [element("p", { class: "replica" },
      "Owned by replica " + resource.replica + " (sharded: each replica's view shows its own share)")] : []),
    ...(resource.fromPool ? [element("p", { class: "from-pool" },
      "From warm pool " + resource.fromPool.pool + ": bound to pooled cluster " + resource.fromPool.member +
      ", made before the Cluster asked")] : []),
    element("h3", {}, "Conditions"), conditionsTable(resource),
    element("h3", {}, "Recent transitions"), transitionsList(resource));
  if (detail.svg) highlight(detail.svg, resource);
  detail.resource = resource;
}

// ---- Rendering, batched.

function render() {
  clearTimeout(renderTimer);
  renderTimer = undefined;
  document.getElementById("empty").hidden = resources.size > 0;
  renderKinds();
  renderFilters();
  renderTable();
  renderDetail();
}

function scheduleRender() {
  if (renderTimer === undefined) renderTimer = setTimeout(render, RENDER_EVERY_MS);
}

// ---- What the reader does: pick a state on a chart, filter, page, pick a resource.

function pickState(group) {
  const kind = group.closest("section.kind-chart").dataset.kind;
  const state = group.dataset.state;
  const again = filter.kind === kind && filter.state === state;
  filter.kind = kind;
  filter.state = again ? "" : state;
  pageIndex = 0;
  render();
}

const kinds = document.getElementById("kinds");
kinds.addEventListener("click", (event) => {
  const group = event.target.closest("g.state");
  if (group) pickState(group);
});
kinds.addEventListener("keydown", (event) => {
  const group = event.target.closest("g.state");
  if (group && (event.key === "Enter" || event.key === " ")) {
    event.preventDefault();
    pickState(group);
  }
});
document.getElementById("filter-kind").addEventListener("change", (event) => {
  filter.kind = event.target.value;
  if (filter.state && !offeredStates().includes(filter.state)) filter.state = "";
  pageIndex = 0;
  render();
});
document.getElementById("filter-state").addEventListener("change", (event) => {
  filter.state = event.target.value;
  pageIndex = 0;
  render();
});
document.getElementById("filter-text").addEventListener("input", (event) => {
  filter.text = event.target.value.trim().toLowerCase();
  pageIndex = 0;
  render();
});
document.getElementById("previous").addEventListener("click", () => {
  pageIndex = Math.max(0, pageIndex - 1);
  render();
});
document.getElementById("next").addEventListener("click", () => {
  pageIndex++;
  render();
});
document.querySelector("#resources tbody").addEventListener("click", (event) => {
  const row = event.target.closest("tr[data-resource]");
  if (row && !event.target.closest("a")) location.hash = encodeURI(row.dataset.resource);
});
window.addEventListener("hashchange", () => {
  picked = pickedInUrl();
  render();
});

// ---- The server's events: they change the data, then a render follows.

function connection(status, text) {
  const badge = document.getElementById("connection");
  badge.dataset.status = status;
  badge.textContent = text;
}

const source = new EventSource("events");
source.onopen = () => connection("live", "live");
source.onerror = () => connection("reconnecting", "reconnecting\u2026");
source.addEventListener("snapshot", (event) => {
  resources.clear();
  for (const resource of JSON.parse(event.data).resources) resources.set(resource.uid, resource);
  order = undefined;
  scheduleRender();
});
source.addEventListener("resource", (event) => {
  const resource = JSON.parse(event.data);
  if (!resources.has(resource.uid)) order = undefined;
  resources.set(resource.uid, resource);
  scheduleRender();
});
source.addEventListener("removed", (event) => {
  if (resources.delete(JSON.parse(event.data).uid)) order = undefined;
  scheduleRender();
});
render();
`;
