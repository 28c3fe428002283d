/** Text widths estimated without a browser, and word wrapping by them: boxes must fit their text in common fonts. */

/** A font the pictures use: its family list for SVG and how to estimate a text's width in it. */
export interface FontSpec {
  /** The CSS font-family list written into the SVG. */
  readonly family: string;
  /** Font size in px. */
  readonly size: number;
  /** Bold text. */
  readonly bold: boolean;
  /** Every glyph is equally wide. */
  readonly monospace: boolean;
}

/** Sans-serif for state names and descriptions. */
export const SANS = "Helvetica, Arial, 'Liberation Sans', 'DejaVu Sans', sans-serif";
/** Monospace for events and guards, which are names from the code. */
export const MONO = "ui-monospace, Menlo, Consolas, 'DejaVu Sans Mono', 'Liberation Mono', monospace";

// Advance widths of Helvetica in thousandths of an em, ASCII 32..126 (Arial's are the same).
const helvetica = [
  278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556, 556,
  556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667, 611, 778, 722, 278,
  500, 667, 556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469,
  556, 333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500,
  278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
];
/** Fallback fonts (DejaVu Sans on Linux) run wider than Helvetica: estimates keep this much room. */
const sansMargin = 1.12;
const boldFactor = 1.08;
/** Monospace advance in em: DejaVu Sans Mono and Menlo are 0.602, Consolas 0.55. */
const monoAdvance = 0.61;

/** The estimated width in px of `text` set in `font`; never less than the real width in the listed fonts. */
export function textWidth(text: string, font: FontSpec): number {
  if (font.monospace) return [...text].length * monoAdvance * font.size;
  let thousandths = 0;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    thousandths += helvetica[code - 32] ?? 1000;
  }
  return (thousandths / 1000) * font.size * sansMargin * (font.bold ? boldFactor : 1);
}

/**
 * Breaks `text` into at most `maxLines` lines no wider than `maxWidth` (a longer word gets a line of its own);
 * when it does not fit, the last line ends in `…`.
 */
export function wrapText(text: string, font: FontSpec, maxWidth: number, maxLines: number): string[] {
  const words = text.split(/\s+/).filter((word) => word !== "");
  const lines: string[] = [];
  for (const word of words) {
    const last = lines.at(-1);
    if (last !== undefined && textWidth(`${last} ${word}`, font) <= maxWidth)
      lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  if (lines.length <= maxLines) return lines;
  const kept = lines.slice(0, maxLines);
  let tail = kept.at(-1) ?? "";
  while (tail.includes(" ") && textWidth(`${tail}…`, font) > maxWidth)
    tail = tail.slice(0, tail.lastIndexOf(" "));
  kept[kept.length - 1] = `${tail}…`;
  return kept;
}
