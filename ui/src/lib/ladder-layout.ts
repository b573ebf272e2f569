/**
 * Geometry of the ladder (docs/CALL-VIEW.md "Labels"): nothing is cut, columns widen instead.
 * Each header box fits its two lines; each arrow's label fits between the lifelines it joins
 * (arrowhead room on both sides); a self-arrow's label fits between its loop and the next
 * lifeline; a marker's text wraps over as many lines as it needs. Text widths come from
 * `measure` (the browser's canvas with the rendered fonts; a fixed advance in unit tests).
 * Pure; see ladder-layout.test.ts.
 */
export type TextStyle = "title" | "subtitle" | "label" | "marker";
export type Measure = (text: string, style: TextStyle) => number;

export const GUTTER = 112;
export const ROW = 30;
export const MARKER_LINE = 14;
/** Room each side of an arrow label (the arrowhead is 9 px). */
export const ARROW_PAD = 14;
/** A self-arrow's loop before its label starts. */
export const SELF_LOOP = 46;
const BOX_PAD = 12;
const MIN_BOX = 136;
const COL_GAP = 24;
const MARKER_TAG = 52;
const MARGIN = 20;

export interface LayoutColumn {
  title: string;
  subtitle: string;
}

export interface LayoutArrow {
  from: number;
  to: number;
  label: string;
}

export interface LadderLayout {
  /** x of each column's lifeline. */
  centers: number[];
  /** Width of each column's header box. */
  boxes: number[];
  width: number;
  /** Left edge and width of a marker row's text. */
  markerX: number;
  markerTextWidth: number;
}

export function layoutLadder(
  columns: readonly LayoutColumn[],
  arrows: readonly LayoutArrow[],
  measure: Measure,
  minMarkerText = 320,
): LadderLayout {
  const n = columns.length;
  const boxes = columns.map((c) =>
    Math.max(MIN_BOX, Math.ceil(Math.max(measure(c.title, "title"), measure(c.subtitle, "subtitle"))) + 2 * BOX_PAD),
  );
  const gaps = boxes.slice(1).map((w, i) => (boxes[i]! + w) / 2 + COL_GAP);
  let tail = n > 0 ? boxes[n - 1]! / 2 : 0;
  const spans: Array<{ lo: number; hi: number; need: number }> = [];
  for (const a of arrows) {
    const w = Math.ceil(measure(a.label, "label"));
    if (a.from === a.to) {
      const need = SELF_LOOP + w + ARROW_PAD;
      if (a.from < n - 1) spans.push({ lo: a.from, hi: a.from + 1, need });
      else tail = Math.max(tail, need);
    } else spans.push({ lo: Math.min(a.from, a.to), hi: Math.max(a.from, a.to), need: w + 2 * ARROW_PAD });
  }
  // Narrow spans first: widening a wide span spreads over the gaps it crosses, and widening never
  // shrinks a span already satisfied.
  spans.sort((a, b) => a.hi - a.lo - (b.hi - b.lo));
  for (const s of spans) {
    let sum = 0;
    for (let g = s.lo; g < s.hi; g++) sum += gaps[g]!;
    if (sum >= s.need) continue;
    const add = (s.need - sum) / (s.hi - s.lo);
    for (let g = s.lo; g < s.hi; g++) gaps[g]! += add;
  }
  const centers: number[] = [];
  let x = GUTTER + (n > 0 ? boxes[0]! / 2 : 0);
  for (let i = 0; i < n; i++) {
    centers.push(Math.round(x));
    x += gaps[i] ?? 0;
  }
  const markerX = GUTTER + MARKER_TAG;
  const right = n > 0 ? centers[n - 1]! + tail : GUTTER;
  const width = Math.ceil(Math.max(right, markerX + minMarkerText) + MARGIN);
  return { centers, boxes, width, markerX, markerTextWidth: width - markerX - MARGIN };
}

/** `text` in lines no wider than `width` (at spaces; a longer word is broken inside). */
export function wrapText(text: string, width: number, measure: Measure, style: TextStyle = "marker"): string[] {
  const lines: string[] = [];
  let line = "";
  const push = (word: string) => {
    const next = line ? `${line} ${word}` : word;
    if (measure(next, style) <= width) {
      line = next;
      return;
    }
    if (line) lines.push(line);
    line = "";
    let rest = word;
    while (measure(rest, style) > width) {
      let k = rest.length - 1;
      while (k > 1 && measure(rest.slice(0, k), style) > width) k--;
      lines.push(rest.slice(0, k));
      rest = rest.slice(k);
    }
    line = rest;
  };
  for (const word of text.split(/\s+/).filter(Boolean)) push(word);
  if (line || lines.length === 0) lines.push(line);
  return lines;
}

/** Height of a marker row of `lines` lines. */
export const markerHeight = (lines: number) => Math.max(ROW, lines * MARKER_LINE + 12);
