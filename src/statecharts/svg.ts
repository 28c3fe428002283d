/** A laid-out statechart as a self-contained SVG document: deterministic text, fixed ids, numbers to one decimal. */
import { type ChartLayout, chartStyle, type Point, type StateBox } from "./svg-layout.ts";
import type { FontSpec } from "./text-metrics.ts";

/** What the SVG says about itself. */
export interface SvgOptions {
  /** The `<title>`: what a screen reader announces, what a browser shows on hover. */
  readonly title: string;
  /** The `<desc>`, e.g. where the picture comes from and how to regenerate it. */
  readonly description?: string;
}

const colors = {
  background: "#ffffff",
  stateFill: "#eef3fb",
  stateStroke: "#4f6b95",
  compoundFill: "#f7f8fa",
  compoundStroke: "#8d9bb0",
  name: "#1b2432",
  description: "#4f5b6d",
  arrow: "#5f6d82",
  label: "#27364a",
  labelFill: "#ffffff",
  initial: "#27364a",
} as const;

const cornerRadius = 10;
const bendRadius = 6;

/** Renders `layout` as SVG: compound boxes, state boxes, arrows, initial dots, then labels on top. */
export function renderSvg(layout: ChartLayout, options: SvgOptions): string {
  const s = chartStyle;
  const markerId = `${xmlId(layout.id)}-arrow`;
  const titleId = `${xmlId(layout.id)}-title`;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${n(layout.width)}" height="${n(layout.height)}" viewBox="0 0 ${n(layout.width)} ${n(layout.height)}" role="img" aria-labelledby="${titleId}">`,
    `<title id="${titleId}">${escapeXml(options.title)}</title>`,
  );
  if (options.description !== undefined) out.push(`<desc>${escapeXml(options.description)}</desc>`);
  out.push(
    "<defs>",
    `<marker id="${markerId}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" markerUnits="userSpaceOnUse" orient="auto">`,
    `<path d="M0,0 L10,5 L0,10 z" fill="${colors.arrow}"/>`,
    "</marker>",
    "</defs>",
    `<rect width="${n(layout.width)}" height="${n(layout.height)}" fill="${colors.background}"/>`,
  );

  for (const box of layout.states) out.push(...stateBox(box));
  const arrowAttributes = `fill="none" stroke="${colors.arrow}" stroke-width="1.3" marker-end="url(#${markerId})"`;
  for (const arrow of layout.arrows) {
    out.push(
      `<path class="transition" data-source="${escapeXml(arrow.source)}" data-target="${escapeXml(arrow.target)}" d="${roundedPath(arrow.points)}" ${arrowAttributes}/>`,
    );
  }
  for (const initial of layout.initials) {
    out.push(
      `<g class="initial" data-target="${escapeXml(initial.target)}">`,
      `<circle cx="${n(initial.center.x)}" cy="${n(initial.center.y)}" r="${n(initial.radius)}" fill="${colors.initial}"/>`,
      `<path d="${roundedPath(initial.points)}" ${arrowAttributes}/>`,
      "</g>",
    );
  }
  for (const arrow of layout.arrows) {
    const box = arrow.labelBox;
    out.push(
      `<g class="transition-label" data-source="${escapeXml(arrow.source)}" data-target="${escapeXml(arrow.target)}">`,
      `<rect x="${n(box.x)}" y="${n(box.y)}" width="${n(box.width)}" height="${n(box.height)}" rx="3" fill="${colors.labelFill}" fill-opacity="0.9"/>`,
      ...arrow.labelLines.map((line, index) =>
        text(
          line,
          s.label,
          colors.label,
          box.x + s.labelPaddingX,
          lineBaseline(box.y + s.labelPaddingY, index, s.labelLineHeight, s.label),
          "start",
        ),
      ),
      "</g>",
    );
  }
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}

/** A state's rounded box with its name and description; compound states get their header top left. */
function stateBox(box: StateBox): string[] {
  const s = chartStyle;
  const fill = box.compound ? colors.compoundFill : colors.stateFill;
  const stroke = box.compound ? colors.compoundStroke : colors.stateStroke;
  const lines = [
    `<g class="state" data-state="${escapeXml(box.state.id)}">`,
    `<rect x="${n(box.x)}" y="${n(box.y)}" width="${n(box.width)}" height="${n(box.height)}" rx="${cornerRadius}" fill="${fill}" stroke="${stroke}" stroke-width="1.5"/>`,
  ];
  if (box.state.final) {
    const inset = 3.5;
    lines.push(
      `<rect x="${n(box.x + inset)}" y="${n(box.y + inset)}" width="${n(box.width - 2 * inset)}" height="${n(box.height - 2 * inset)}" rx="${cornerRadius - inset}" fill="none" stroke="${stroke}" stroke-width="1"/>`,
    );
  }
  const anchor = box.compound ? "start" : "middle";
  const x = box.compound ? box.x + s.paddingX : box.x + box.width / 2;
  const top = box.y + s.paddingY;
  lines.push(
    text(box.state.key, s.name, colors.name, x, lineBaseline(top, 0, s.nameLineHeight, s.name), anchor),
  );
  const descriptionTop = top + s.nameLineHeight + s.nameGap;
  box.descriptionLines.forEach((line, index) => {
    lines.push(
      text(
        line,
        s.description,
        colors.description,
        x,
        lineBaseline(descriptionTop, index, s.descriptionLineHeight, s.description),
        anchor,
      ),
    );
  });
  lines.push("</g>");
  return lines;
}

/** The baseline of line `index` of a block starting at `top`: the glyphs centred in the line height. */
function lineBaseline(top: number, index: number, lineHeight: number, font: FontSpec): number {
  return top + index * lineHeight + (lineHeight - font.size) / 2 + font.size * 0.8;
}

function text(
  content: string,
  font: FontSpec,
  fill: string,
  x: number,
  y: number,
  anchor: "start" | "middle",
): string {
  const weight = font.bold ? ' font-weight="bold"' : "";
  return `<text x="${n(x)}" y="${n(y)}" font-family="${font.family}" font-size="${font.size}"${weight} fill="${fill}" text-anchor="${anchor}">${escapeXml(content)}</text>`;
}

/** An orthogonal polyline with its corners rounded (a quadratic curve through each bend). */
function roundedPath(points: readonly Point[]): string {
  const [first, ...rest] = points;
  if (first === undefined) return "";
  const parts = [`M${n(first.x)},${n(first.y)}`];
  rest.forEach((point, index) => {
    const previous = points[index] ?? first;
    const next = rest[index + 1];
    if (next === undefined) {
      parts.push(`L${n(point.x)},${n(point.y)}`);
      return;
    }
    const r = Math.min(bendRadius, distance(previous, point) / 2, distance(point, next) / 2);
    const before = towards(point, previous, r);
    const after = towards(point, next, r);
    parts.push(`L${n(before.x)},${n(before.y)}`, `Q${n(point.x)},${n(point.y)} ${n(after.x)},${n(after.y)}`);
  });
  return parts.join(" ");
}

function distance(a: Point, b: Point): number {
  return Math.hypot(b.x - a.x, b.y - a.y);
}

/** The point `length` away from `from` in the direction of `to`. */
function towards(from: Point, to: Point, length: number): Point {
  const d = distance(from, to);
  return d === 0
    ? from
    : { x: from.x + ((to.x - from.x) * length) / d, y: from.y + ((to.y - from.y) * length) / d };
}

/** A number with at most one decimal, never `-0`: the same layout always prints the same text. */
function n(value: number): string {
  const rounded = Math.round(value * 10) / 10;
  return Object.is(rounded, -0) ? "0" : String(rounded);
}

/** Text and attribute values as XML (and HTML: the live view page escapes with it too). */
export function escapeXml(value: string): string {
  return value
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}

/** A name usable as an XML id. */
function xmlId(value: string): string {
  return value.replace(/[^A-Za-z0-9_-]/g, "_").replace(/^(?=[^A-Za-z_])/, "_");
}
