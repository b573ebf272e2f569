import { describe, expect, test } from "bun:test";
import { parseKeys } from "./keys.ts";
import { FORMAT_FIELD, FORM_FIELDS, handleKey, initialState, type Effect, type UiState } from "./state.ts";

/** Feeds typed input through the state machine; returns the final state and every effect. */
function type(s: UiState, input: string, page = 10, total = 100): { state: UiState; effects: Effect[] } {
  const effects: Effect[] = [];
  for (const k of parseKeys(input)) {
    const r = handleKey(s, k, page, total);
    s = r.state;
    if (r.effect !== "none") effects.push(r.effect);
  }
  return { state: s, effects };
}
const idx = (key: string) => FORM_FIELDS.findIndex((f) => f.key === key);

describe("interactive state", () => {
  test("flags pre-fill the form; focus starts on Host when it is empty, else on Call-ID", () => {
    const s = initialState({ host: "h:1", "call-id": "abc", format: "ladder" });
    expect(s.values).toMatchObject({
      host: "h:1",
      "call-id": "abc",
      from: "1h",
      to: "now",
      proto: "sip",
      limit: "50",
      format: "callflow",
    });
    expect(s.format).toBe("callflow");
    expect(s.focus).toBe(idx("call-id"));
    expect(initialState({}).focus).toBe(0);
    expect(initialState({ format: "pcap" }).format).toBe("table");
  });

  test("Tab / Shift+Tab move (and wrap), typing edits, Backspace and Ctrl+U", () => {
    let { state } = type(initialState({}), "10.0.0.1:80\x7f\x7f8080");
    expect(state.values.host).toBe("10.0.0.1:8080");
    state = type(state, "\t").state;
    expect(state.focus).toBe(idx("user"));
    state = type(state, "\x1b[Z\x1b[Z").state;
    expect(state.focus).toBe(FORM_FIELDS.length - 1);
    state = type(state, "\t\tadmin\x15root").state;
    expect(state.values.user).toBe("root");
  });

  test("Format field: ←/→/Space/f cycle through the six screen formats, typing does not edit it", () => {
    let s: UiState = { ...initialState({ host: "h" }), focus: FORMAT_FIELD };
    const seen: string[] = [];
    for (let i = 0; i < 6; i++) {
      s = type(s, " ").state;
      seen.push(s.format);
    }
    expect(seen).toEqual(["vertical", "csv", "json", "chart", "callflow", "table"]);
    expect(type(s, "\x1b[D").state.format).toBe("callflow");
    expect(type(s, "\x1b[C").state.values.format).toBe("vertical");
    expect(type(s, "x\x7f").state.format).toBe("table");
  });

  test("Enter searches, Esc quits from the form; nothing starts while busy", () => {
    expect(type(initialState({ host: "h" }), "\r").effects).toEqual(["search"]);
    expect(type(initialState({ host: "h" }), "\x1b").effects).toEqual(["quit"]);
    expect(type({ ...initialState({ host: "h" }), busy: true }, "\r").effects).toEqual([]);
    expect(type(initialState({ host: "h" }), "\x03").effects).toEqual(["quit"]);
  });

  test("results: f cycles the format (re-render), r re-runs, Esc back to the form, q quits, scrolling is bounded", () => {
    const results: UiState = { ...initialState({ host: "h" }), mode: "results" };
    const f = type(results, "ff");
    expect([f.state.format, f.effects]).toEqual(["csv", ["render", "render"]]);
    expect(type(results, "r").effects).toEqual(["search"]);
    expect(type(results, "q").effects).toEqual(["quit"]);
    const back = type(results, "\x1b").state;
    expect([back.mode, back.values.host]).toEqual(["form", "h"]);
    expect(type(results, "\x1b[6~\x1b[6~").state.scroll).toBe(20);
    expect(type(results, "\x1b[F").state.scroll).toBe(90);
    expect(type(results, "\x1b[F\x1b[6~").state.scroll).toBe(90);
    expect(type(results, "\x1b[A").state.scroll).toBe(0);
    expect(type(results, "\x1b[B\x1b[B\x1b[A").state.scroll).toBe(1);
    expect(type(results, "\x1b[B", 10, 5).state.scroll).toBe(0);
  });

  test("table: ↑ ↓ PgDn Home End move the selected row (the view follows), Enter opens its call", () => {
    const table: UiState = { ...initialState({ host: "h" }), mode: "results", rows: 30 };
    expect(type(table, "\x1b[B\x1b[B\x1b[A").state.selected).toBe(1);
    expect(type(table, "\x1b[A").state.selected).toBe(0);
    // 10 lines a page, 2 of them header: row 8 is on line 10, so the view scrolls by one.
    const down = type(table, "\x1b[B".repeat(8)).state;
    expect([down.selected, down.scroll]).toEqual([8, 1]);
    const end = type(table, "\x1b[F").state;
    expect([end.selected, end.scroll]).toEqual([29, 22]);
    expect(type(end, "\x1b[H").state).toMatchObject({ selected: 0, scroll: 0 });
    expect(type(table, "\x1b[6~").state.selected).toBe(10);
    expect(type(table, "\r").effects).toEqual(["call"]);
    // Other formats scroll as before; an empty table has nothing to open.
    expect(type({ ...table, format: "vertical" }, "\r").effects).toEqual([]);
    expect(type({ ...table, rows: 0 }, "\r").effects).toEqual([]);
  });

  test("call view: keys scroll it, Esc goes back to the list with the selection kept, q quits", () => {
    const call: UiState = { ...initialState({ host: "h" }), mode: "call", rows: 5, selected: 3 };
    expect(type(call, "\x1b[B\x1b[B", 10, 30).state.callScroll).toBe(2);
    const back = type(call, "\x1b");
    expect([back.state.mode, back.state.selected, back.effects]).toEqual(["results", 3, ["render"]]);
    expect(type(call, "q").effects).toEqual(["quit"]);
  });
});
