import { describe, expect, test } from "bun:test";
import { extractSipMessages } from "../../pcap/index.ts";
import { rowsToPcap } from "./pcap.ts";

const T = 1714564800000000;
const invite = "INVITE sip:bob@b SIP/2.0\r\nCall-ID: x\r\nContent-Length: 0\r\n\r\n";
const ok200 = "SIP/2.0 200 OK\r\nCall-ID: x\r\nContent-Length: 0\r\n\r\n";

describe("--format pcap rows", () => {
  test("rule 3: rows sorted by time, ports 0 → 5060, rows without payload or address skipped", () => {
    const rows = [
      { timestamp_us: T + 20, src_ip: "10.0.0.2", dst_ip: "10.0.0.1", src_port: 5080, dst_port: 0, payload: ok200 },
      { timestamp_us: T + 10, src_ip: "10.0.0.1", dst_ip: "10.0.0.2", src_port: 5060, dst_port: 5080, payload: invite },
      { timestamp_us: T + 30, src_ip: "10.0.0.1", dst_ip: "", payload: invite },
      { timestamp_us: T + 40, src_ip: "10.0.0.1", dst_ip: "10.0.0.2", payload: "" },
      { timestamp: "2024-05-01T12:00:00.000050Z", src_ip: "2001:db8::1", dst_ip: "2001:db8::2", payload: invite },
    ];
    const r = rowsToPcap(rows);
    if (!r.ok) throw new Error(r.reason);
    expect([r.value.written, r.value.skipped]).toEqual([3, 2]);
    const x = extractSipMessages(r.value.bytes);
    expect(x.error).toBeNull();
    expect(
      x.messages.map((m) => [
        m.timestampUs - T,
        m.srcIp,
        m.srcPort,
        m.dstIp,
        m.dstPort,
        m.transport,
        new TextDecoder().decode(m.payload).split("\r\n")[0],
      ]),
    ).toEqual([
      [10, "10.0.0.1", 5060, "10.0.0.2", 5080, "udp", "INVITE sip:bob@b SIP/2.0"],
      [20, "10.0.0.2", 5080, "10.0.0.1", 5060, "udp", "SIP/2.0 200 OK"],
      [50, "2001:db8::1", 5060, "2001:db8::2", 5060, "udp", "INVITE sip:bob@b SIP/2.0"],
    ]);
  });

  test("base64-stored payloads (not valid UTF-8) are written as their bytes", () => {
    const bytes = new Uint8Array([
      ...new TextEncoder().encode("MESSAGE sip:b SIP/2.0\r\nContent-Length: 2\r\n\r\n"),
      0xff,
      0xfe,
    ]);
    const r = rowsToPcap([
      {
        timestamp_us: T,
        src_ip: "10.0.0.1",
        dst_ip: "10.0.0.2",
        payload: Buffer.from(bytes).toString("base64"),
        data_extra: { payload_encoding: "base64" },
      },
    ]);
    if (!r.ok) throw new Error(r.reason);
    expect([...extractSipMessages(r.value.bytes).messages[0]!.payload]).toEqual([...bytes]);
  });

  test("rule 4: no row with a SIP payload is an error", () => {
    const r = rowsToPcap([{ src_ip: "10.0.0.1", dst_ip: "10.0.0.2", payload: null }]);
    expect(r).toEqual({
      ok: false,
      reason: "NO_SIP_PAYLOAD",
      detail: "none of the 1 rows has a SIP payload with source and destination address",
    });
    expect(rowsToPcap([]).ok).toBe(false);
  });
});
