import { describe, expect, test } from "bun:test";
import {
  availableColumns,
  chooserGroups,
  columnSortValue,
  columnTitle,
  columnValue,
  visibleColumns,
} from "./columns.ts";

/** The keys `POST /transactions/search` answers for SIP calls (src/api/search/service.ts toItem). */
const SIP_KEYS = [
  "id",
  "sid",
  "uuid",
  "timestamp",
  "timestamp_us",
  "date",
  "session_id",
  "caller",
  "callee",
  "src_ip",
  "dst_ip",
  "src_port",
  "dst_port",
  "event",
  "method",
  "response_code",
  "cseq_method",
  "proto_type",
  "protocol",
  "node_id",
  "cid",
  "payload",
  "data_extra",
  "src_alias",
  "dst_alias",
  "storage_lake",
  "storage_volume",
];
const ROW = {
  uuid: "01a2",
  timestamp_us: 1_795_644_735_290_000,
  session_id: "k1@x",
  src_ip: "10.0.0.1",
  src_port: 5060,
  src_alias: "sbc-1",
  dst_ip: "10.0.0.2",
  dst_port: 5080,
  dst_alias: null,
  node_id: 2001,
  data_extra: { node_name: "edge", request_uri: "sip:2002@example.net", user_agent: "svc-test/1.0" },
};

describe("results grid columns (docs/DASHBOARD.md)", () => {
  test("the default for SIP is what a HOMER user reads; no internal key", () => {
    const shown = visibleColumns(availableColumns(SIP_KEYS), undefined);
    expect(shown.map(columnTitle)).toEqual([
      "Date",
      "Method",
      "From user",
      "To user",
      "R-URI",
      "Source",
      "Destination",
      "Call-ID",
      "Capture ID",
      "Node",
      "Proto",
    ]);
    for (const k of ["uuid", "storage_lake", "storage_volume", "data_extra", "payload", "id", "sid"])
      expect(shown).not.toContain(k);
  });

  test("a choice wins (keys no longer answered are dropped); an empty or stale choice falls back to the default", () => {
    const all = availableColumns(SIP_KEYS);
    expect(visibleColumns(all, ["session_id", "user_agent", "gone"])).toEqual(["session_id", "user_agent"]);
    expect(visibleColumns(all, [])).toEqual(visibleColumns(all, undefined));
    expect(visibleColumns(all, ["gone"])).toEqual(visibleColumns(all, undefined));
  });

  test("a table without the preferred keys shows its first non-internal keys", () => {
    expect(visibleColumns(["id", "uuid", "host", "region", "value"], undefined)).toEqual(["host", "region", "value"]);
  });

  test("the chooser lists internal keys apart, the rest default columns first", () => {
    const g = chooserGroups(availableColumns(SIP_KEYS));
    expect(g.internal).toEqual([
      "id",
      "sid",
      "uuid",
      "timestamp_us",
      "date",
      "proto_type",
      "payload",
      "data_extra",
      "src_alias",
      "dst_alias",
      "storage_lake",
      "storage_volume",
    ]);
    expect(g.regular.slice(0, 4)).toEqual(["timestamp", "event", "caller", "callee"]);
    expect(g.regular).toContain("user_agent");
    expect(g.regular).toContain("src_port");
  });

  test("values: host labels, data_extra members, a real column before data_extra", () => {
    expect(columnValue(ROW, "src")).toBe("sbc-1 (10.0.0.1:5060)");
    expect(columnValue(ROW, "dst")).toBe("10.0.0.2:5080");
    expect(columnValue(ROW, "ruri")).toBe("sip:2002@example.net");
    expect(columnValue(ROW, "node")).toBe("edge");
    expect(columnValue({ ...ROW, user_agent: "column" }, "user_agent")).toBe("column");
    expect(columnValue({ session_id: "x" }, "ruri")).toBeUndefined();
    expect(columnSortValue(ROW, "timestamp")).toBe(1_795_644_735_290_000);
    expect(columnSortValue(ROW, "node_id")).toBe(2001);
    expect(columnSortValue(ROW, "src")).toBe("sbc-1 (10.0.0.1:5060)");
  });
});
