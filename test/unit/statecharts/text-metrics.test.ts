/** Text width estimates and wrapping: monotone widths, lines within the width, an ellipsis when text is cut. */
import { describe, expect, it } from "vitest";
import { type FontSpec, MONO, SANS, textWidth, wrapText } from "../../../src/statecharts/text-metrics.ts";

const sans: FontSpec = { family: SANS, size: 11, bold: false, monospace: false };
const mono: FontSpec = { family: MONO, size: 11, bold: false, monospace: true };

describe("textWidth", () => {
  it("grows with the text and the font size, and is wider in bold", () => {
    expect(textWidth("ready", sans)).toBeGreaterThan(textWidth("read", sans));
    expect(textWidth("ready", { ...sans, size: 14 })).toBeGreaterThan(textWidth("ready", sans));
    expect(textWidth("ready", { ...sans, bold: true })).toBeGreaterThan(textWidth("ready", sans));
    expect(textWidth("mmmm", sans)).toBeGreaterThan(textWidth("iiii", sans));
  });

  it("gives every character the same advance in monospace", () => {
    expect(textWidth("iiii", mono)).toBe(textWidth("mmmm", mono));
    expect(textWidth("always [backendReady]", mono)).toBeCloseTo(21 * 0.61 * 11);
  });
});

describe("wrapText", () => {
  const text = "The backend deletes the cluster; we wait until it reports it gone.";

  it("breaks at spaces into lines no wider than asked", () => {
    const lines = wrapText(text, sans, 120, 10);
    expect(lines.join(" ")).toBe(text);
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(textWidth(line, sans)).toBeLessThanOrEqual(120);
  });

  it("cuts after the last allowed line with an ellipsis", () => {
    const lines = wrapText(text, sans, 120, 2);
    expect(lines).toHaveLength(2);
    expect(lines[1]?.endsWith("…")).toBe(true);
    expect(textWidth(lines[1] ?? "", sans)).toBeLessThanOrEqual(120);
  });

  it("keeps a word longer than the width on a line of its own", () => {
    expect(wrapText("a verylongwordindeed b", sans, 30, 5)).toEqual(["a", "verylongwordindeed", "b"]);
  });
});
