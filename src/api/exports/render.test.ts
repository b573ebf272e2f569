import { describe, expect, test } from "bun:test";
import { extractSipMessages } from "../../pcap/index.ts";
import { exportFileName, payloadBytes, renderPcap, renderText, toPcapRecord } from "./render.ts";

const invite = "INVITE sip:b@x SIP/2.0\r\nCall-ID: c1\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n";
const ok = "SIP/2.0 200 OK\r\nCall-ID: c1\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n";
const items = [
  {
    timestamp: "2024-05-01T12:00:00.123456Z",
    timestamp_us: 1714564800123456,
    protocol: "UDP",
    src_ip: "10.0.0.1",
    src_port: 5062,
    dst_ip: "10.0.0.2",
    dst_port: 5060,
    src_alias: "pbx",
    dst_alias: null,
    payload: invite,
    data_extra: {},
  },
  {
    timestamp: "2024-05-01T12:00:00.200001Z",
    timestamp_us: 1714564800200001,
    protocol: "TCP",
    src_ip: "2001:db8::2",
    src_port: 5060,
    dst_ip: "2001:db8::1",
    dst_port: 40000,
    src_alias: null,
    dst_alias: "phone",
    payload: ok,
    data_extra: {},
  },
];

describe("PCAP rendering", () => {
  test("one frame per message at its own µs time, addresses, ports and payload bytes as stored", () => {
    const x = extractSipMessages(renderPcap(items));
    expect(x.error).toBeNull();
    expect(
      x.messages.map((m) => [
        m.timestampUs,
        m.srcIp,
        m.srcPort,
        m.dstIp,
        m.dstPort,
        new TextDecoder().decode(m.payload),
      ]),
    ).toEqual([
      [1714564800123456, "10.0.0.1", 5062, "10.0.0.2", 5060, invite],
      [1714564800200001, "2001:db8::2", 5060, "2001:db8::1", 40000, ok],
    ]);
  });

  test("a payload stored base64 (not UTF-8) is exported as its original bytes", () => {
    const raw = Uint8Array.of(0x80, 0x00, 0xff, 0x41);
    const m = { payload: Buffer.from(raw).toString("base64"), data_extra: { payload_encoding: "base64" } };
    expect(Array.from(payloadBytes(m))).toEqual([0x80, 0x00, 0xff, 0x41]);
    expect(Array.from(payloadBytes({ payload: "AAEC" }))).toEqual(Array.from(new TextEncoder().encode("AAEC")));
  });

  test("ports missing from a row are left to the writer (5060); the time is a number", () => {
    const r = toPcapRecord({ timestamp_us: "1700000000000001", src_ip: "10.0.0.1", dst_ip: "10.0.0.2", payload: "x" });
    expect(r).toMatchObject({ timestampUs: 1700000000000001, srcIp: "10.0.0.1", dstIp: "10.0.0.2" });
    expect(r.srcPort).toBeUndefined();
  });

  test("no messages is a valid empty capture (file header only)", () => {
    expect(renderPcap([]).length).toBe(24);
  });
});

describe("TEXT rendering", () => {
  test("a header per message (number, time, transport, endpoints with aliases), then the SIP text with LF line ends", () => {
    const t = renderText(items, ["c1"]);
    expect(t).toBe(
      [
        "# svc transaction export: 2 message(s) of c1",
        "# from 2024-05-01T12:00:00.123456Z to 2024-05-01T12:00:00.200001Z",
        "",
        "[1] 2024-05-01T12:00:00.123456Z UDP 10.0.0.1:5062 (pbx) -> 10.0.0.2:5060",
        "INVITE sip:b@x SIP/2.0\nCall-ID: c1\nCSeq: 1 INVITE\nContent-Length: 0",
        "",
        "[2] 2024-05-01T12:00:00.200001Z TCP [2001:db8::2]:5060 -> [2001:db8::1]:40000 (phone)",
        "SIP/2.0 200 OK\nCall-ID: c1\nCSeq: 1 INVITE\nContent-Length: 0",
        "",
        "",
      ].join("\n"),
    );
  });
});

describe("file names", () => {
  test.each([
    [["abc@10.0.0.1"], 1714564800123456, "pcap", "call-abc_10.0.0.1-20240501T120000.pcap"],
    [["../../etc/passwd"], undefined, "text", "call-etc_passwd.txt"],
    [[], undefined, "pcap", "call-export.pcap"],
    [["a@pbx", "b@pbx", "c@pbx"], 1714564800123456, "text", "calls-a_pbx-and-2-more-20240501T120000.txt"],
    [["x".repeat(100)], undefined, "pcap", `call-${"x".repeat(48)}.pcap`],
  ] as const)("%p", (sessions, us, format, want) => {
    expect(exportFileName(sessions, us, format)).toBe(want);
  });
});
