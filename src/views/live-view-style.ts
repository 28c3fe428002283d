/** The live view page's stylesheet, inlined and allowed by its hash (see live-view-page.ts). */

export const LIVE_VIEW_STYLE = `
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
#resources td:nth-child(4), table.conditions td:nth-child(4) { overflow-wrap: anywhere; }
#resources td:nth-child(2), #resources td:nth-child(3) { white-space: nowrap; }
th { color: var(--muted); font-weight: 600; }
.kind-chart, .list, .resource { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: .8rem 1rem; }
.kinds { display: grid; grid-template-columns: repeat(auto-fit, minmax(380px, 1fr)); gap: 1rem; }
.kinds:empty { display: none; }
.kind-chart h2 { margin: 0 0 .5rem; font-size: 1.05rem; }
.kind-chart h2 .total { color: var(--muted); font-weight: 500; font-size: .9rem; }
.kind-chart .chart svg { display: block; border: 0; max-height: 80vh; }
.kind-chart g.state { cursor: pointer; }
.kind-chart g.state:hover > rect:first-of-type, .kind-chart g.state:focus-visible > rect:first-of-type { stroke: var(--accent); stroke-width: 2.5; }
.kind-chart g.state:focus { outline: none; }
.kind-chart g.state.empty { opacity: .38; }
.kind-chart g.state.picked > rect:first-of-type { fill: var(--accent-soft); stroke: var(--accent); stroke-width: 4; }
.kind-chart g.count rect { fill: var(--accent); stroke: #fff; stroke-width: 2; }
.kind-chart g.count text { fill: #fff; font-family: system-ui, "DejaVu Sans", sans-serif; }
.kind-chart g.state.empty g.count rect { fill: var(--gone); }
.split { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 1rem; align-items: start; }
.filters { display: flex; flex-wrap: wrap; gap: .4rem 1rem; margin-bottom: .6rem; font-size: .86rem; color: var(--muted); }
.filters select, .filters input { font: inherit; color: var(--ink); margin-left: .3rem; }
.filters input { width: 14rem; }
#resources a { color: inherit; }
#resources tbody tr { cursor: pointer; }
#resources tbody tr:hover { background: #f8f9fa; }
#resources tbody tr.picked { background: var(--accent-soft); }
.pager { display: flex; align-items: center; gap: .8rem; margin-top: .6rem; font-size: .86rem; }
#detail { position: sticky; top: .5rem; max-height: calc(100vh - 1rem); overflow: auto; box-sizing: border-box; }
.pager span { color: var(--muted); font-variant-numeric: tabular-nums; }
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
.body { display: grid; grid-template-columns: minmax(0, 1fr); gap: 1rem; margin-top: .6rem; }
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
.chart svg { width: 100%; height: auto; max-height: 90vh; border: 1px solid var(--line); border-radius: 6px; }
.chart g.state.current > rect:first-of-type { fill: var(--accent-soft); stroke: var(--accent); stroke-width: 4; }
.chart g.state.current text { fill: #7a2a00; }
.chart g.state.ancestor > rect:first-of-type { stroke: var(--accent); stroke-width: 2.5; stroke-dasharray: 8 5; }
.chart path.transition.last { stroke: var(--accent); stroke-width: 3; }
.none { color: var(--muted); font-size: .86rem; }
@media (max-width: 1000px) { .split { grid-template-columns: 1fr; } #detail { position: static; max-height: none; } }
`;
