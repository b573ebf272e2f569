import { describe, expect, test } from "bun:test";
import { cellText, resultColumns, tableOrder, terminalWidth, truncate } from "./columns.ts";
import { MAX_CELL, csvField, renderCsv, renderJson, renderTable, renderVertical } from "./text-formats.ts";

const rows = [
  { id: 1, event: "INVITE", src_ip: "10.0.0.1", caller: "alice", payload: "INVITE sip:b SIP/2.0\r\nVia: x\r\n\r\n" },
  { id: 2, event: "200", src_ip: "2001:db8::1", caller: null, payload: "SIP/2.0 200 OK\r\n" },
];

describe("table", () => {
  test("columns are aligned, the rule is as wide as each column, line breaks shown as ⏎", () => {
    const t = renderTable(rows, ["id", "event", "src_ip", "caller"], 120);
    expect(t).toEqual([
      "id  event   src_ip       caller", //
      "--  ------  -----------  ------",
      "1   INVITE  10.0.0.1     alice",
      "2   200     2001:db8::1",
    ]);
    expect(renderTable(rows, ["payload"], 120)[2]).toBe("INVITE sip:b SIP/2.0⏎Via: x⏎⏎");
  });

  test("lines are cut at the terminal width with an ellipsis", () => {
    const t = renderTable(rows, ["id", "event", "src_ip", "caller"], 20);
    for (const l of t) expect([...l].length).toBeLessThanOrEqual(20);
    expect(t[0]).toBe("id  event   src_ip …");
    expect(t[3]).toBe("2   200     2001:db…");
  });

  test("a cell is cut at MAX_CELL so one long value cannot eat the line", () => {
    const long = "x".repeat(200);
    const t = renderTable([{ a: long, b: "B" }], ["a", "b"], 500);
    expect(t[2]).toBe(`${"x".repeat(MAX_CELL - 1)}…  B`);
  });

  test("control characters from captured payloads never reach the terminal", () => {
    expect(cellText("a\x1b[2Jb\x07\x9bc\td")).toBe("a\ufffd[2Jb\ufffd\ufffdc d");
    expect(renderVertical([{ p: "x\x1b]0;owned\x07" }], ["p"])[1]).toBe("p: x\ufffd]0;owned\ufffd");
  });

  test("column choice: --fields, else keys then extra members; the table leads with what people read", () => {
    expect(resultColumns([{ a: 1, z: 2 }], ["a"], undefined)).toEqual(["a", "z"]);
    expect(resultColumns([{ a: 1 }], ["a"], ["z", "a"])).toEqual(["z", "a"]);
    expect(
      tableOrder(["id", "sid", "uuid", "timestamp", "method", "response_code", "event", "src_ip", "payload"]),
    ).toEqual(["timestamp", "event", "src_ip", "id", "sid", "uuid", "method", "response_code", "payload"]);
    expect(tableOrder(["a", "time", "b"])).toEqual(["time", "a", "b"]);
  });

  test("width: the TTY, else COLUMNS, else 120", () => {
    expect([
      terminalWidth({}, 90),
      terminalWidth({ COLUMNS: "70" }, undefined),
      terminalWidth({ COLUMNS: "x" }, undefined),
      terminalWidth({}, undefined),
    ]).toEqual([90, 70, 120, 120]);
    expect([truncate("abc", 3), truncate("abcd", 3), truncate("äöüß", 2), truncate("x", 0)]).toEqual([
      "abc",
      "ab…",
      "ä…",
      "",
    ]);
  });
});

describe("vertical", () => {
  test("one block per row, names right-aligned, multi-line values indented", () => {
    expect(renderVertical(rows, ["event", "caller", "payload"])).toEqual([
      "*************************** 1. row ***************************",
      "  event: INVITE",
      " caller: alice",
      "payload: INVITE sip:b SIP/2.0",
      "         Via: x",
      "*************************** 2. row ***************************",
      "  event: 200",
      " caller: ",
      "payload: SIP/2.0 200 OK",
    ]);
  });
});

describe("csv (RFC 4180)", () => {
  test.each([
    ["plain", "plain"],
    ["a,b", '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ["two\r\nlines", '"two\r\nlines"'],
    ["lf\nonly", '"lf\nonly"'],
    [null, ""],
    [486, "486"],
    [{ a: 1 }, '"{""a"":1}"'],
  ])("field %p → %p", (v, out) => expect(csvField(v)).toBe(out));

  test("header, then records, each ended by CRLF", () => {
    expect(renderCsv(rows, ["id", "caller", "payload"])).toBe(
      'id,caller,payload\r\n1,alice,"INVITE sip:b SIP/2.0\r\nVia: x\r\n\r\n"\r\n2,,"SIP/2.0 200 OK\r\n"\r\n',
    );
  });
});

describe("json", () => {
  test("an array of row objects with the chosen columns", () => {
    expect(JSON.parse(renderJson(rows, ["id", "caller", "missing"]))).toEqual([
      { id: 1, caller: "alice", missing: null },
      { id: 2, caller: null, missing: null },
    ]);
    expect(renderJson([], ["id"])).toBe("[]\n");
  });
});
