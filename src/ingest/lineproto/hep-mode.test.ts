import { describe, expect, test } from "bun:test";
import type { RowWriter, TableDef } from "../../core/index.ts";
import { hepTableDef } from "../hep/tables.ts";
import { hepTableRequest, writeHepTable } from "./hep-mode.ts";
import { parseLineProtocol, type LpPrecision } from "./parse.ts";
import type { LineIssue } from "./rows.ts";
import type { LpSink } from "./tables.ts";

const points = (body: string, precision: LpPrecision = "s") => parseLineProtocol(body, { precision }).points;

/** A sink that keeps rows as column-name → value (HEP table layouts are fixed, so this is enough). */
function memorySink(): { sink: LpSink; rows: Array<Record<string, unknown>> } {
  const defs = new Map<string, TableDef>();
  const rows: Array<Record<string, unknown>> = [];
  const sink: LpSink = {
    defineTable: async (d) => void defs.set(`${d.schema}.${d.name}`, d),
    extendTable: async () => {
      throw new Error("HEP tables never grow");
    },
    table: (k) => defs.get(k),
    tables: () => [...defs.values()],
    storedTables: async () => [],
    backlog: () => 0,
    row: (k) => {
      const cols = defs
        .get(k)!
        .columns.filter((c) => !c.derived)
        .map((c) => c.name);
      const vals: unknown[] = [];
      const w: RowWriter = {
        str: (v) => (vals.push(v ?? null), w),
        bytes: (v) => (vals.push(v), w),
        int: (v) => (vals.push(v ?? null), w),
        float: (v) => (vals.push(v ?? null), w),
        bool: (v) => (vals.push(v ?? null), w),
        time: (v) => (vals.push(v ?? null), w),
        end: () => void rows.push(Object.fromEntries(cols.map((c, i) => [c, vals[i]]))),
      };
      return w;
    },
  };
  return { sink, rows };
}

describe("structured HEP table mode (docs/LINE-PROTOCOL.md rules 1-6)", () => {
  test.each([
    ["cpu v=1", "none"],
    ['hep_proto_1_call session_id="a"', "hep"],
    ['hep_proto_1_call session_id="a"\nhep_proto_1_call session_id="b"', "hep"],
    ['hep_proto_1_call session_id="a"\ncpu v=1', "reject"],
    ['hep_proto_1_call session_id="a"\nhep_proto_5_default v=1', "reject"],
    ["hep_proto_2_default v=1", "reject"],
    ["Hep_Proto_1_call v=1", "reject"],
  ] as const)("hepTableRequest(%j) is %s", (body, kind) => {
    expect(hepTableRequest(points(body)).kind).toBe(kind);
  });

  test.each([
    [
      "line timestamp wins",
      `hep_proto_1_call session_id="x",timestamp="2020-01-01T00:00:00Z" 1700000000`,
      "s",
      1_700_000_000_000_000,
    ],
    [
      "RFC 3339 with offset and nanoseconds",
      `hep_proto_1_call session_id="x",timestamp="2023-11-14T17:13:20.123456789-05:00"`,
      "s",
      1_700_000_000_123_456,
    ],
    [
      "SQL style is UTC",
      `hep_proto_1_call,timestamp=2023-11-14\\ 22:13:20.5 session_id="x"`,
      "s",
      1_700_000_000_500_000,
    ],
    [
      "epoch integer in the request precision",
      `hep_proto_1_call session_id="x",timestamp=1700000000123i`,
      "ms",
      1_700_000_000_123_000,
    ],
    ["epoch digits as a tag", `hep_proto_1_call,timestamp=1700000000 session_id="x"`, "s", 1_700_000_000_000_000],
    ["no timestamp: the receive time", `hep_proto_1_call session_id="x"`, "s", 42_000_000],
  ] as const)("rule 4: %s", async (_what, body, precision, wantUs) => {
    const { sink, rows } = memorySink();
    const lines: LineIssue[] = [];
    const r = await writeHepTable(
      sink,
      hepTableDef(1, "call"),
      points(body, precision),
      { precision, nowNs: 42_000_000_000n },
      lines,
    );
    expect(lines).toEqual([]);
    expect(r.written).toBe(1);
    expect(rows[0]!.timestamp).toBe(wantUs);
  });

  test.each([
    [`session_id="x",timestamp="yesterday"`, "timestamp", "bad_timestamp"],
    [`session_id="x",timestamp="2023-02-30 00:00:00"`, "timestamp", "bad_timestamp"],
    [`session_id="x",date="2023-11-15"`, "date", "bad_date"],
    [`session_id="x",data_extra="{"`, "data_extra", "bad_data_extra"],
    [`session_id="x",data_extra="null"`, "data_extra", "bad_data_extra"],
    [`session_id="x",src_port=-2147483649i`, "src_port", "type_mismatch"],
    [`session_id="x",node_id=1.5`, "node_id", "type_mismatch"],
    [`session_id=5i`, "session_id", "type_mismatch"],
    [`session_id="x",aor="sip:a@b"`, "aor", "unknown_column"],
    [`session_id="x",uuid="u"`, "uuid", "generated_column"],
    [`session_id="x",protocol=256i`, "protocol", "type_mismatch"],
    [`session_id="x",protocol=-1i`, "protocol", "type_mismatch"],
    [`session_id="x",protocol=17.5`, "protocol", "type_mismatch"],
    [`session_id="x",protocol=true`, "protocol", "type_mismatch"],
  ])("a line with %s is refused (%s: %s)", async (fields, key, reason) => {
    const { sink, rows } = memorySink();
    const lines: LineIssue[] = [];
    const r = await writeHepTable(
      sink,
      hepTableDef(1, "call"),
      points(`hep_proto_1_call ${fields}`),
      { precision: "s", nowNs: 0n },
      lines,
    );
    expect(r.written).toBe(0);
    expect(rows).toEqual([]);
    expect(lines.map((l) => [l.line, l.key, l.reason])).toEqual([[1, key, reason]]);
  });

  // Rule 3: "ports and protocol are integer fields"; protocol is the IP protocol number (HEP chunk
  // 0x0002), stored as the text HEP ingest stores for it.
  test.each([
    ["protocol=17i", "UDP"],
    ["protocol=6i", "TCP"],
    ["protocol=132u", "SCTP"],
    ["protocol=50i", "50"],
    ["protocol=0i", "0"],
    [`protocol="TLS"`, "TLS"],
    [`protocol="17"`, "17"],
  ])("rule 3: %s is stored as protocol %j", async (field, want) => {
    const { sink, rows } = memorySink();
    const lines: LineIssue[] = [];
    const r = await writeHepTable(
      sink,
      hepTableDef(1, "call"),
      points(`hep_proto_1_call session_id="x",src_port=5060i,${field} 1700000000`),
      { precision: "s", nowNs: 0n },
      lines,
    );
    expect(lines).toEqual([]);
    expect(r.written).toBe(1);
    expect(rows[0]).toMatchObject({ protocol: want, src_port: 5060n });
  });

  test.each([
    ['hep_proto_1_call,protocol=17 session_id="x"', "UDP"],
    ['hep_proto_1_call,protocol=TCP session_id="x"', "TCP"],
  ])("rule 3: a tag %j is stored as protocol %j", async (body, want) => {
    const { sink, rows } = memorySink();
    const lines: LineIssue[] = [];
    await writeHepTable(sink, hepTableDef(1, "call"), points(body), { precision: "s", nowNs: 0n }, lines);
    expect(lines).toEqual([]);
    expect(rows[0]).toMatchObject({ protocol: want });
  });

  test("rule 3: tags and fields merged, integers from fields or digit tags, proto_type from the table name, data_extra {} by default", async () => {
    const { sink, rows } = memorySink();
    const body = `hep_proto_34_default,src_ip=10.1.1.1,src_port=1234,node_id=9 dst_port=5060u,payload="{\\"mos\\":4.1}",src_ip="10.2.2.2" 1700000000`;
    expect((await writeHepTable(sink, hepTableDef(34), points(body), { precision: "s", nowNs: 0n }, [])).written).toBe(
      1,
    );
    expect(rows[0]).toMatchObject({
      src_ip: "10.2.2.2",
      src_port: 1234n,
      dst_port: 5060n,
      node_id: 9n,
      proto_type: 34n,
      payload: `{"mos":4.1}`,
      data_extra: "{}",
      session_id: null,
    });
  });
});
