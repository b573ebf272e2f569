import { describe, expect, test } from "bun:test";
import { ARROW_PAD, GUTTER, SELF_LOOP, layoutLadder, wrapText, type Measure } from "./ladder-layout.ts";

/** A fixed advance per character, as a monospace font has. */
const mono: Measure = (text) => text.length * 7;

describe("ladder layout", () => {
  test("a label wider than the default gap widens it so the label fits between the lifelines", () => {
    const cols = [
      { title: "10.0.0.1", subtitle: "" },
      { title: "10.0.0.2", subtitle: "" },
    ];
    const short = layoutLadder(cols, [{ from: 0, to: 1, label: "BYE" }], mono);
    const long = "488 Not Acceptable Here (SDP) with a long reason phrase";
    const wide = layoutLadder(cols, [{ from: 0, to: 1, label: long }], mono);
    expect(wide.centers[1]! - wide.centers[0]!).toBeGreaterThanOrEqual(mono(long, "label") + 2 * ARROW_PAD);
    expect(wide.centers[1]! - wide.centers[0]!).toBeGreaterThan(short.centers[1]! - short.centers[0]!);
    expect(wide.width).toBeGreaterThan(wide.centers[1]!);
  });

  test("a label across several columns widens their gaps together; narrower spans stay satisfied", () => {
    const cols = ["a", "b", "c", "d"].map((title) => ({ title, subtitle: "" }));
    const arrows = [
      { from: 0, to: 3, label: "x".repeat(120) },
      { from: 1, to: 2, label: "y".repeat(40) },
    ];
    const l = layoutLadder(cols, arrows, mono);
    expect(l.centers[3]! - l.centers[0]!).toBeGreaterThanOrEqual(120 * 7 + 2 * ARROW_PAD);
    expect(l.centers[2]! - l.centers[1]!).toBeGreaterThanOrEqual(40 * 7 + 2 * ARROW_PAD);
    expect(l.centers).toEqual([...l.centers].sort((a, b) => a - b));
  });

  test("header boxes fit their text and never overlap; a self-arrow's label fits before the next lifeline or the edge", () => {
    const cols = [
      { title: "a-very-long-alias-name-for-the-core-sbc", subtitle: "[2001:db8::1]:5060" },
      { title: "10.0.0.2", subtitle: "" },
    ];
    const l = layoutLadder(
      cols,
      [
        { from: 0, to: 0, label: "OPTIONS" },
        { from: 1, to: 1, label: "NOTIFY with a long label" },
      ],
      mono,
    );
    expect(l.boxes[0]).toBeGreaterThanOrEqual(mono(cols[0]!.title, "title"));
    expect(l.centers[0]! - l.boxes[0]! / 2).toBeGreaterThanOrEqual(GUTTER);
    expect(l.centers[0]! + l.boxes[0]! / 2).toBeLessThanOrEqual(l.centers[1]! - l.boxes[1]! / 2);
    expect(l.centers[1]! - l.centers[0]!).toBeGreaterThanOrEqual(SELF_LOOP + mono("OPTIONS", "label"));
    expect(l.width).toBeGreaterThanOrEqual(l.centers[1]! + SELF_LOOP + mono("NOTIFY with a long label", "label"));
  });

  test("wrapText keeps every character, breaks at spaces, and breaks a word longer than a line", () => {
    const text = "ERROR dialog 4f2a timed out waiting for ACK after 32 s " + "z".repeat(30);
    const lines = wrapText(text, 140, mono);
    expect(lines.every((l) => mono(l, "marker") <= 140)).toBe(true);
    expect(lines.join("").replace(/\s/g, "")).toBe(text.replace(/\s/g, ""));
    expect(lines.at(-2)).toBe("z".repeat(20));
    expect(lines.length).toBeGreaterThan(3);
    expect(wrapText("", 100, mono)).toEqual([""]);
  });
});
