import { describe, expect, test } from "bun:test";
import { CsvBatch, type RowWriter } from "../../core/index.ts";
import { decodeHep, encodeHep3, type HepPacket } from "../../hep/index.ts";
import { parseSip } from "../../sip/index.ts";
import { invite } from "../../../test/fixtures/sip.ts";
import { writeOtherRow, writeSipRow } from "./rows.ts";

/** Records the values of one row in order. */
function recorder(): RowWriter & { values: unknown[] } {
  const values: unknown[] = [];
  const w = {
    values,
    str: (v: string | null | undefined) => (values.push(v ?? null), w),
    bytes: (v: Uint8Array) => (values.push(new TextDecoder().decode(v)), w),
    int: (v: number | bigint | null | undefined) => (values.push(v ?? null), w),
    float: (v: number | null | undefined) => (values.push(v ?? null), w),
    bool: (v: boolean | null | undefined) => (values.push(v ?? null), w),
    time: (v: number | null | undefined) => (values.push(v ?? null), w),
    end: () => undefined,
  };
  return w;
}

function packet(payload: string, extra: Partial<Parameters<typeof encodeHep3>[0]> = {}): HepPacket {
  const r = decodeHep(
    encodeHep3({
      srcIp: "10.0.0.1",
      dstIp: "10.0.0.2",
      srcPort: 5060,
      dstPort: 5060,
      timestampUs: 1_700_000_000_000_000,
      protoType: 1,
      captureId: 9,
      nodeName: 'edge "1"\\ü',
      payload,
      ...extra,
    }),
  );
  if (!r.ok) throw new Error(r.reason);
  return r.value;
}

describe("data_extra JSON", () => {
  test("SIP row: valid JSON with the parser's fields, escapes intact, same text as JSON.stringify of the object", () => {
    const p = packet(invite({ callId: "x@y", from: "1001", to: "2002", fromTag: 'f"t' }), { correlationId: "corr-1" });
    const sip = parseSip(p.payload);
    if (!sip.ok) throw new Error(sip.reason);
    const w = recorder();
    writeSipRow(w, p, sip.value, false);
    const text = String(w.values[w.values.length - 1]);
    const obj = JSON.parse(text) as Record<string, unknown>;
    expect(obj).toMatchObject({
      node_name: 'edge "1"\\ü',
      capture_id: 9,
      correlation_id: "corr-1",
      from_tag: 'f"t',
      user_agent: sip.value.userAgent,
      cseq: sip.value.cseq,
    });
    expect(text).toBe(JSON.stringify(obj));
  });

  test("written into a real CsvBatch, data_extra is the same text as JSON.stringify gives", () => {
    const p = packet(
      invite({ callId: "x@y", from: "1001", to: "2002", fromTag: 'f"t\u0001', extraHeaders: ['X-Tenant: ünï "c"'] }),
      { correlationId: "corr-1" },
    );
    const sip = parseSip(p.payload, { customHeaders: ["X-Tenant"], correlationHeaders: [] });
    if (!sip.ok) throw new Error(sip.reason);
    const rec = recorder();
    writeSipRow(rec, p, sip.value, false);
    const expected = String(rec.values[rec.values.length - 1]);
    expect(JSON.parse(expected).custom_headers).toEqual({ "X-Tenant": 'ünï "c"' });
    const batch = new CsvBatch(rec.values.length, 256);
    writeSipRow(batch, p, sip.value, false);
    const text = new TextDecoder().decode(batch.view());
    const start = text.lastIndexOf("\u0001{");
    expect(text.endsWith("}\u0001\n")).toBe(true);
    expect(text.slice(start + 1, -2)).toBe(expected);
  });

  test("non-SIP row: payload that is not UTF-8 is base64 and says so", () => {
    const p = packet("", { protoType: 5, payload: new Uint8Array([0xff, 0x00, 0x81]) as never });
    const w = recorder();
    writeOtherRow(w, p, "rtcp");
    const obj = JSON.parse(String(w.values[w.values.length - 1])) as Record<string, unknown>;
    expect(obj).toEqual({ node_name: 'edge "1"\\ü', capture_id: 9, payload_encoding: "base64" });
    expect(w.values[w.values.length - 2]).toBe(Buffer.from([0xff, 0x00, 0x81]).toString("base64"));
  });
});
