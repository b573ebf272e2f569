import { describe, expect, test } from "bun:test";
import { chartValue, kpiQuery, kpiText, metricOf, nodeOf } from "./kpi.ts";

describe("call KPI helpers", () => {
  test.each([
    [0.714285, "ratio", "71.4 %"],
    [1, "ratio", "100.0 %"],
    [0, "ratio", "0.0 %"],
    [12.5, "pct", "12.50 %"],
    [1234567, "count", "1,234,567"],
    [1234.5, "ms", "1,235 ms"],
    [20, "ms", "20.0 ms"],
    [27.55, "s", "27.6 s"],
    [3.8, "mos", "3.80"],
    [null, "ratio", "–"],
    [Number.NaN, "ms", "–"],
  ] as const)("%p as %p reads %p", (v, kind, text) => expect(kpiText(v, kind)).toBe(text));

  test("a ratio is charted in percent, other figures as they are, no value stays a gap", () => {
    expect([chartValue(0.5, "ratio"), chartValue(250, "ms"), chartValue(null, "ratio")]).toEqual([50, 250, null]);
  });

  test("an unknown metric in a saved config falls back to ASR; the node is trimmed, empty means every node", () => {
    expect([metricOf("nope").key, metricOf("acd_s").key]).toEqual(["asr", "acd_s"]);
    expect([nodeOf({ node: " 8 " }), nodeOf({}), nodeOf({ node: 8 })]).toEqual(["8", "", ""]);
    const offset = -new Date(1).getTimezoneOffset();
    const tz = offset === 0 ? "" : `&utc_offset_min=${offset}`;
    expect(kpiQuery({ from: 1, to: 2 }, "8", { step: "1d" })).toBe(`from=1&to=2&step=1d${tz}&node=8`);
    expect(kpiQuery({ from: 1, to: 2 }, "")).toBe(`from=1&to=2${tz}`);
  });
});
