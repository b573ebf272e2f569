import { describe, expect, test } from "bun:test";
import { decodeHep, encodeHep3, StreamCapture } from "../hep/index.ts";
import { parseSip } from "../sip/index.ts";
import { eventsOf } from "./event.ts";

const NOW_US = Date.now() * 1000 + 123;
const INVITE = [
  "INVITE sip:bob@example.net SIP/2.0",
  "Via: SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bK-1",
  "From: <sip:alice@example.com>;tag=a",
  "To: <sip:bob@example.net>",
  "Call-ID: ev-1@pbx",
  "CSeq: 7 INVITE",
  "Content-Length: 0",
  "",
  "",
].join("\r\n");

/** Encodes, decodes and parses like ingest does, then captures: the records as the broker reads them. */
function capture(packets: Array<Parameters<typeof encodeHep3>[0]>) {
  const c = new StreamCapture({ initialBytes: 64 });
  for (const p of packets) {
    const r = decodeHep(encodeHep3(p));
    if (!r.ok) throw new Error(r.reason);
    const sip = r.value.protoType === 1 ? parseSip(r.value.payload) : undefined;
    c.tap(r.value, sip?.ok ? sip.value : undefined);
  }
  const chunk = c.seal()!;
  return [...eventsOf(new Uint8Array(chunk.buffer, 0, chunk.length).slice(), chunk.count)];
}

describe("capture records → frames", () => {
  test("SIP, IPv6, binary payload and SIP that did not parse survive the record (the buffer grows from 64 bytes)", () => {
    const [sip, v6, bin, bad] = capture([
      {
        srcIp: "10.0.0.1",
        dstIp: "10.0.0.2",
        srcPort: 5060,
        dstPort: 5080,
        timestampUs: NOW_US,
        protoType: 1,
        captureId: 4294967295,
        payload: INVITE,
      },
      {
        srcIp: "2001:db8::1",
        dstIp: "::ffff:192.0.2.1",
        srcPort: 1,
        dstPort: 65535,
        timestampUs: NOW_US,
        protoType: 100,
        captureId: 0,
        payload: "log line",
      },
      {
        srcIp: "10.0.0.3",
        dstIp: "10.0.0.4",
        srcPort: 40001,
        dstPort: 42001,
        timestampUs: NOW_US,
        protoType: 5,
        payload: new Uint8Array([0x80, 0xc8, 0, 0, 0xff]),
      },
      { srcIp: "10.0.0.5", dstIp: "10.0.0.6", timestampUs: NOW_US, protoType: 1, payload: "not sip" },
    ]);
    expect(sip!.frame(true)).toEqual({
      ts: Math.floor(NOW_US / 1000),
      proto: 1,
      src_ip: "10.0.0.1",
      src_port: 5060,
      dst_ip: "10.0.0.2",
      dst_port: 5080,
      node_id: 4294967295,
      sip: {
        method: "INVITE",
        resp_code: "",
        resp_text: "",
        callid: "ev-1@pbx",
        cseq: "7 INVITE",
        from_user: "alice",
        to_user: "bob",
        ruri_user: "bob",
      },
      payload: INVITE,
    });
    expect(v6!.frame(false)).toEqual({
      ts: Math.floor(NOW_US / 1000),
      proto: 100,
      src_ip: "2001:db8::1",
      src_port: 1,
      dst_ip: "::ffff:192.0.2.1",
      dst_port: 65535,
      node_id: 0,
    });
    expect(bin!.frame(true)).toMatchObject({
      proto: 5,
      payload: Buffer.from([0x80, 0xc8, 0, 0, 0xff]).toString("base64"),
      payload_encoding: "base64",
    });
    expect(bad!.frame(false).sip).toBeUndefined();
    expect(bad!.matches({ methods: new Set(["INVITE"]), onlyRequests: false, includePayload: false, history: 0 })).toBe(
      false,
    );
    expect(bad!.matches({ onlyRequests: true, includePayload: false, history: 0 })).toBe(true);
    // callid: exact (a Call-ID is case-sensitive), SIP only; SIP that did not parse has none.
    const byCall = (ids: string[]) => ({
      callIds: new Set(ids),
      onlyRequests: false,
      includePayload: false,
      history: 0,
    });
    expect([sip, v6, bin, bad].map((e) => e!.matches(byCall(["ev-1@pbx"])))).toEqual([true, true, true, false]);
    expect([
      sip!.matches(byCall(["EV-1@pbx"])),
      sip!.matches(byCall(["other", "ev-1@pbx"])),
      sip!.matches(byCall(["ev-1"])),
    ]).toEqual([false, true, false]);
    // The JSON is built once per variant.
    expect(sip!.json(false)).toBe(sip!.json(false));
    expect(JSON.parse(sip!.json(false))).toEqual(sip!.frame(false));
  });

  test("a record larger than maxBytes is dropped and counted, the rest kept", () => {
    let dropped = 0;
    const c = new StreamCapture({ initialBytes: 64, maxBytes: 256, onDrop: () => dropped++ });
    const r = decodeHep(
      encodeHep3({
        srcIp: "10.0.0.1",
        dstIp: "10.0.0.2",
        timestampUs: NOW_US,
        protoType: 100,
        payload: "x".repeat(300),
      }),
    );
    const small = decodeHep(
      encodeHep3({ srcIp: "10.0.0.1", dstIp: "10.0.0.2", timestampUs: NOW_US, protoType: 100, payload: "y" }),
    );
    if (!r.ok || !small.ok) throw new Error("decode");
    c.tap(r.value, undefined);
    c.tap(small.value, undefined);
    expect(dropped).toBe(1);
    expect(c.seal()?.count).toBe(1);
    expect(c.seal()).toBeUndefined();
  });
});
