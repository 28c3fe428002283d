/** Lays a statechart out with ELK (layered, compound states as nested nodes) into boxes, dots and routed arrows. */
import type { ELK, ElkExtendedEdge, ElkLabel, ElkNode } from "elkjs/lib/elk-api.js";
import { commonAncestor, type Statechart, type StatechartState, transitionLabel } from "./graph.ts";
import { type FontSpec, MONO, SANS, textWidth, wrapText } from "./text-metrics.ts";

/** A point in px, origin at the top left. */
export interface Point {
  readonly x: number;
  readonly y: number;
}

/** A rectangle in px. */
export interface Box {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** A state's rounded box; a compound state's box holds its header (name, description) and its children. */
export interface StateBox extends Box {
  readonly state: StatechartState;
  /** The description as wrapped lines (none if the state has no description). */
  readonly descriptionLines: readonly string[];
  /** Has child states, drawn inside. */
  readonly compound: boolean;
}

/** The dot of an initial state and its arrow to that state. */
export interface InitialMarker {
  /** The state whose initial child this marks; `undefined` for the machine's initial state. */
  readonly parent: string | undefined;
  /** The state it points at. */
  readonly target: string;
  readonly center: Point;
  readonly radius: number;
  /** The arrow from the dot to the target's border. */
  readonly points: readonly Point[];
}

/** An arrow for all transitions from one state to another (several guarded ones share it, one label line each). */
export interface TransitionArrow {
  readonly source: string;
  readonly target: string;
  /** One line per transition: `always [backendReady]`. */
  readonly labelLines: readonly string[];
  /** From the source's border to the target's border, with the bends in between. */
  readonly points: readonly Point[];
  /** Where the label goes. */
  readonly labelBox: Box;
}

/** A statechart with every element placed. */
export interface ChartLayout {
  readonly id: string;
  readonly width: number;
  readonly height: number;
  /** Parents before their children. */
  readonly states: readonly StateBox[];
  readonly initials: readonly InitialMarker[];
  readonly arrows: readonly TransitionArrow[];
}

/** Fonts, line heights and spacing of the picture; the renderer uses the same ones. */
export const chartStyle = {
  name: { family: SANS, size: 14, bold: true, monospace: false } satisfies FontSpec,
  description: { family: SANS, size: 11, bold: false, monospace: false } satisfies FontSpec,
  label: { family: MONO, size: 11, bold: false, monospace: true } satisfies FontSpec,
  nameLineHeight: 18,
  descriptionLineHeight: 14,
  labelLineHeight: 14,
  /** Space between the name and the description. */
  nameGap: 3,
  paddingX: 12,
  paddingY: 9,
  /** Descriptions wrap at this width, in at most this many lines. */
  descriptionWidth: 196,
  descriptionLines: 3,
  minStateWidth: 110,
  labelPaddingX: 4,
  labelPaddingY: 2,
  initialRadius: 6,
  /** Room around the children of a compound state (below its header) and around the whole chart. */
  compoundPadding: 18,
  margin: 16,
} as const;

/** Every option is spelled out: the layout (and so the committed SVG) must not depend on ELK's defaults changing. */
const rootOptions: Record<string, string> = {
  "org.eclipse.elk.algorithm": "layered",
  "org.eclipse.elk.direction": "DOWN",
  "org.eclipse.elk.hierarchyHandling": "INCLUDE_CHILDREN",
  "org.eclipse.elk.edgeRouting": "ORTHOGONAL",
  "org.eclipse.elk.json.shapeCoords": "ROOT",
  "org.eclipse.elk.json.edgeCoords": "ROOT",
  "org.eclipse.elk.randomSeed": "1",
  "org.eclipse.elk.padding": padding(chartStyle.margin, chartStyle.margin),
  "org.eclipse.elk.spacing.nodeNode": "40",
  "org.eclipse.elk.spacing.edgeNode": "18",
  "org.eclipse.elk.spacing.edgeEdge": "12",
  "org.eclipse.elk.spacing.edgeLabel": "4",
  "org.eclipse.elk.layered.spacing.nodeNodeBetweenLayers": "44",
  "org.eclipse.elk.layered.spacing.edgeNodeBetweenLayers": "18",
  "org.eclipse.elk.layered.spacing.edgeEdgeBetweenLayers": "12",
  "org.eclipse.elk.edgeLabels.placement": "CENTER",
  // A label sits in the row just above its target: labels of long edges then share rows with nodes instead of
  // stacking up side by side halfway, which keeps the chart about 1000 px wide (GitHub's README width).
  "org.eclipse.elk.layered.edgeLabels.centerLabelPlacementStrategy": "HEAD_LAYER",
  // Long edges run straight down beside the states instead of spreading the rows out sideways.
  "org.eclipse.elk.layered.nodePlacement.strategy": "LINEAR_SEGMENTS",
  "org.eclipse.elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
  // Back edges are the ones that go to a state declared earlier: the chart reads top-down in config order.
  "org.eclipse.elk.layered.cycleBreaking.strategy": "MODEL_ORDER",
};

/** Lays `chart` out; the same chart always gives the same layout. */
export async function layoutChart(chart: Statechart): Promise<ChartLayout> {
  const headers = chart.states.map(headerOf);
  const arrowGroups = arrowGroupsOf(chart);
  const laidOut = await (await createElk()).layout(elkGraph(chart, headers, arrowGroups));
  return placedChart(chart, laidOut, headers, arrowGroups);
}

/** A state's header: its name and wrapped description, and the size they take. */
interface StateHeader {
  readonly state: StatechartState;
  readonly descriptionLines: string[];
  readonly width: number;
  readonly height: number;
}

/** All transitions from one state to another: they share one arrow, one label line each. */
interface ArrowGroup {
  readonly source: string;
  readonly target: string;
  readonly lines: string[];
}

function headerOf(state: StatechartState): StateHeader {
  const s = chartStyle;
  const descriptionLines =
    state.description === undefined
      ? []
      : wrapText(state.description, s.description, s.descriptionWidth, s.descriptionLines);
  const lines = descriptionLines.length;
  const height =
    s.paddingY +
    s.nameLineHeight +
    (lines > 0 ? s.nameGap + lines * s.descriptionLineHeight : 0) +
    s.paddingY;
  const widths = [
    textWidth(state.key, s.name),
    ...descriptionLines.map((line) => textWidth(line, s.description)),
  ];
  const width = Math.max(s.minStateWidth, Math.ceil(Math.max(...widths) + 2 * s.paddingX));
  return { state, descriptionLines, width, height };
}

/** The transitions grouped by source and target, in the order of their first transition. */
function arrowGroupsOf(chart: Statechart): ArrowGroup[] {
  const groups = new Map<string, ArrowGroup>();
  for (const transition of chart.transitions) {
    const key = `${transition.source}\u0000${transition.target}`;
    const group = groups.get(key) ?? { source: transition.source, target: transition.target, lines: [] };
    group.lines.push(transitionLabel(transition));
    groups.set(key, group);
  }
  return [...groups.values()];
}

/**
 * ELK's graph of the chart: a node per state (a compound state's children inside it), a dot per initial state,
 * and an edge per arrow group (`t<index>`), each edge in the nearest node that holds both its ends.
 */
function elkGraph(
  chart: Statechart,
  headers: readonly StateHeader[],
  arrowGroups: readonly ArrowGroup[],
): ElkNode {
  const root: ElkNode = { id: "root", layoutOptions: rootOptions, children: [], edges: [] };
  const elkNodes = new Map<string, ElkNode>();
  const containerOf = (stateId: string | undefined) =>
    stateId === undefined ? root : (elkNodes.get(stateId) ?? root);
  for (const header of headers) {
    const node = stateNode(header);
    elkNodes.set(header.state.id, node);
    containerOf(header.state.parent).children?.push(node);
  }
  const d = 2 * chartStyle.initialRadius;
  for (const state of chart.states.filter((candidate) => candidate.initial)) {
    const container = containerOf(state.parent);
    container.children?.unshift({ id: initialId(state.parent), width: d, height: d });
    container.edges?.push({
      id: `${initialId(state.parent)}->`,
      sources: [initialId(state.parent)],
      targets: [state.id],
    });
  }
  arrowGroups.forEach((group, index) => {
    containerOf(commonAncestor(chart, group.source, group.target)).edges?.push(arrowEdge(group, index));
  });
  return root;
}

/** A simple state's node has its header's size; a compound state's is at least that, its children below the header. */
function stateNode({ state, width, height }: StateHeader): ElkNode {
  const s = chartStyle;
  if (state.children.length === 0) return { id: state.id, width, height };
  return {
    id: state.id,
    children: [],
    edges: [],
    layoutOptions: {
      "org.eclipse.elk.padding": padding(height + s.compoundPadding / 2, s.compoundPadding),
      "org.eclipse.elk.nodeSize.constraints": "MINIMUM_SIZE",
      "org.eclipse.elk.nodeSize.minimum": `(${width}, ${height + 2 * s.compoundPadding})`,
    },
  };
}

/** The edge of arrow group `index`, with a label as large as its lines. */
function arrowEdge(group: ArrowGroup, index: number): ElkExtendedEdge {
  const s = chartStyle;
  const label: ElkLabel = {
    text: group.lines.join("\n"),
    width: Math.ceil(Math.max(...group.lines.map((line) => textWidth(line, s.label))) + 2 * s.labelPaddingX),
    height: group.lines.length * s.labelLineHeight + 2 * s.labelPaddingY,
  };
  return { id: `t${index}`, sources: [group.source], targets: [group.target], labels: [label] };
}

/** The chart's elements where ELK placed them. */
function placedChart(
  chart: Statechart,
  laidOut: ElkNode,
  headers: readonly StateHeader[],
  arrowGroups: readonly ArrowGroup[],
): ChartLayout {
  const placed = new Placed(laidOut);
  return {
    id: chart.id,
    width: laidOut.width ?? 0,
    height: laidOut.height ?? 0,
    states: headers.map(({ state, descriptionLines }) => ({
      ...placed.boxOf(state.id),
      state,
      descriptionLines,
      compound: state.children.length > 0,
    })),
    initials: chart.states
      .filter((state) => state.initial)
      .map((state) => {
        const dot = placed.boxOf(initialId(state.parent));
        return {
          parent: state.parent,
          target: state.id,
          center: { x: dot.x + dot.width / 2, y: dot.y + dot.height / 2 },
          radius: chartStyle.initialRadius,
          points: pointsOf(placed.edges.get(`${initialId(state.parent)}->`)),
        };
      }),
    arrows: arrowGroups.map((group, index) => {
      const edge = placed.edges.get(`t${index}`);
      const label = edge?.labels?.[0];
      return {
        source: group.source,
        target: group.target,
        labelLines: group.lines,
        points: pointsOf(edge),
        labelBox: {
          x: label?.x ?? 0,
          y: label?.y ?? 0,
          width: label?.width ?? 0,
          height: label?.height ?? 0,
        },
      };
    }),
  };
}

/** ELK's nodes and edges of a laid-out graph, by id. */
class Placed {
  readonly nodes = new Map<string, ElkNode>();
  readonly edges = new Map<string, ElkExtendedEdge>();

  constructor(laidOut: ElkNode) {
    this.#collect(laidOut);
  }

  boxOf(id: string): Box {
    const node = this.nodes.get(id);
    if (
      node?.x === undefined ||
      node.y === undefined ||
      node.width === undefined ||
      node.height === undefined
    ) {
      throw new Error(`ELK returned no position for "${id}"`);
    }
    return { x: node.x, y: node.y, width: node.width, height: node.height };
  }

  #collect(node: ElkNode): void {
    this.nodes.set(node.id, node);
    for (const edge of node.edges ?? []) this.edges.set(edge.id, edge);
    for (const child of node.children ?? []) this.#collect(child);
  }
}

/** ELK's bundled build (no worker thread), loaded on first use: 1.6 MB the engine's other commands need not parse. */
async function createElk(): Promise<ELK> {
  const { default: elkModule } = await import("elkjs/lib/elk.bundled.js");
  return new elkModule.default();
}

/** The id of the dot that marks the initial state of `parent` (of the machine if `undefined`). */
function initialId(parent: string | undefined): string {
  return `[*]${parent ?? ""}`;
}

/** ELK's padding option value. */
function padding(top: number, sides: number): string {
  return `[top=${top},left=${sides},bottom=${sides},right=${sides}]`;
}

/** The route of an edge: start, bends, end of each section in turn. */
function pointsOf(edge: ElkExtendedEdge | undefined): Point[] {
  if (edge?.sections === undefined || edge.sections.length === 0) {
    throw new Error(`ELK returned no route for edge "${edge?.id ?? "?"}"`);
  }
  return edge.sections.flatMap((section) => [
    section.startPoint,
    ...(section.bendPoints ?? []),
    section.endPoint,
  ]);
}
