import { describe, expect, test } from "bun:test";
import { qosPoint } from "../api/search/qos.ts";
import { decodeHep } from "../hep/index.ts";
import { parseCommandLine } from "./options.ts";
import { planFlat } from "./profile.ts";
import { codecOf, eModel, mediaReportJson, mediaReportPackets } from "./media-report.ts";
import { streamSsrc } from "./rtcp.ts";
import { sdpBody } from "./sip-wire.ts";

const A = { ip: "10.0.0.1", port: 6000 };
const B = { ip: "10.0.0.2", port: 7000 };
const NOW = Date.UTC(2026, 10, 26, 5, 0, 0, 500);

describe("media reports", () => {
  test("E-model without loss or delay: R = 93.2 − Ie, MOS by G.107 Annex B", () => {
    // G.107's reference figures for G.711 without impairments: R 93.2, MOS 4.41.
    expect(eModel(0)).toEqual({ r: 93.2, mos: 4.41 });
    expect(eModel(11)).toEqual({ r: 82.2, mos: 4.1 });
    expect(eModel(20)).toEqual({ r: 73.2, mos: 3.74 });
    // Bounds of Annex B: R ≤ 0 gives 1, R ≥ 100 gives 4.5.
    expect(eModel(100).mos).toBe(1);
    expect(eModel(-10).mos).toBe(4.5);
  });

  test("codec: first payload type of m=audio, by a=rtpmap or RFC 3551's static table; a=ptime", () => {
    expect(codecOf(sdpBody("10.0.0.1", 6000, 1))).toEqual({ pt: 0, name: "PCMU", clockRate: 8000, ptimeMs: 20, ie: 0 });
    expect(codecOf("v=0\r\nm=audio 4000 RTP/AVP 18 0\r\na=ptime:30\r\n")).toEqual({
      pt: 18,
      name: "G729",
      clockRate: 8000,
      ptimeMs: 30,
      ie: 11,
    });
    expect(codecOf("v=0\r\nm=audio 4000 RTP/AVP 3\r\n")?.ie).toBe(20);
    expect(codecOf("v=0\r\nm=audio 4000 RTP/SAVPF 111 0\r\na=rtpmap:111 opus/48000/2\r\n")).toEqual({
      pt: 111,
      name: "opus",
      clockRate: 48000,
      ptimeMs: 20,
      ie: 0,
    });
    expect(codecOf("v=0\r\nm=audio 4000 RTP/AVP 97\r\na=rtpmap:97 iLBC/8000\r\n")).toEqual({
      pt: 97,
      name: "iLBC",
      clockRate: 8000,
      ptimeMs: 20,
      ie: null,
    });
    expect(codecOf("v=0\r\nm=video 4000 RTP/AVP 96\r\n")).toBeNull();
  });

  test("the JSON: 10 s of G.711 is 500 packets, none lost, MOS 4.41 (× 100 in `mos`), marked synthetic", () => {
    const j = mediaReportJson("call-1", A, B, 0, codecOf(sdpBody("10.0.0.1", 6000, 1)), 10_000.4, NOW);
    expect(j).toMatchObject({
      CORRELATION_ID: "call-1",
      RTP_SIP_CALL_ID: "call-1",
      TYPE: "FINAL",
      DIR: 0,
      SRC_IP: "10.0.0.1",
      SRC_PORT: 6000,
      DST_IP: "10.0.0.2",
      DST_PORT: 7000,
    });
    expect(j).toMatchObject({
      CODEC_PT: 0,
      CODEC_NAME: "PCMU",
      CLOCK: 8000,
      PTIME: 20,
      TOTAL_PK: 500,
      EXPECTED_PK: 500,
      PACKET_LOSS: 0,
      JITTER: 0,
    });
    expect(j).toMatchObject({
      MOS: 4.41,
      RFACTOR: 93.2,
      mos: 441,
      packets_lost: 0,
      fraction_lost: 0,
      media_ms: 10_000,
      ie: 0,
      synthetic: true,
      ssrc: streamSsrc("call-1", A),
    });
    expect(j.REPORT_TS).toBe(NOW / 1000);
    // The reverse direction has the other sender, so the other SSRC; the other end's report of the same stream the same one.
    expect(mediaReportJson("call-1", B, A, 1, null, 0, NOW).ssrc).toBe(streamSsrc("call-1", B));
    expect(mediaReportJson("call-1", A, B, 1, null, 0, NOW).ssrc).toBe(j.ssrc);
    expect(streamSsrc("call-1", B)).not.toBe(j.ssrc);
  });

  test("an unrated codec has no MOS rather than an invented one", () => {
    const j = mediaReportJson("c", A, B, 1, codecOf("m=audio 1 RTP/AVP 97\r\na=rtpmap:97 iLBC/8000\r\n"), 1000, NOW);
    expect(["MOS", "RFACTOR", "mos"].filter((k) => k in j)).toEqual([]);
    expect(j).toMatchObject({ CODEC_NAME: "iLBC", EXPECTED_PK: 50, ie: null, synthetic: true });
  });

  test("svc's QoS reader takes MOS, R-factor, packets lost, fraction lost, jitter and SSRC from the JSON", () => {
    const j = mediaReportJson("call-2", A, B, 0, codecOf("m=audio 1 RTP/AVP 18\r\n"), 2000, NOW);
    const p = qosPoint(JSON.stringify(j), NOW);
    expect(p).toEqual({
      point: { ts_ms: NOW, mos: 4.1, r_factor: 82.2, jitter: 0, packets_lost: 0, fraction_lost: 0 },
      ssrc: String(streamSsrc("call-2", A)),
      synthetic: true,
    });
  });

  test("HEP3 packets: type 34, Call-ID as correlation id, MOS × 100 chunk, RTP addresses per direction", () => {
    const packets = mediaReportPackets(
      "call-3",
      { local: A, remote: B, answerSdp: sdpBody("10.0.0.2", 7000, 1), mediaMs: 1000 },
      { captureId: 2323, authKey: "k" },
      NOW,
    );
    const decoded = packets.map((b) => decodeHep(b));
    const seen = decoded.map((d) => {
      if (!d.ok) throw new Error(d.reason);
      const h = d.value;
      return [
        h.protoType,
        h.correlationId,
        h.mos,
        h.captureId,
        h.authKey,
        `${h.srcIp}:${h.srcPort}>${h.dstIp}:${h.dstPort}`,
        JSON.parse(new TextDecoder().decode(h.payload)).DIR,
      ];
    });
    expect(seen).toEqual([
      [34, "call-3", 441, 2323, "k", "10.0.0.1:6000>10.0.0.2:7000", 0],
      [34, "call-3", 441, 2323, "k", "10.0.0.2:7000>10.0.0.1:6000", 1],
    ]);
  });

  test("send_media_report: a profile key and a flag of the same name, off by default", () => {
    const engine = (json: Record<string, unknown>, argv: string[] = []) =>
      planFlat(json, "p.json", "/tmp", argv).engines[0]!.opts;
    expect(engine({ role: "load", remote_addr: "x" }).send_media_report).toBe(false);
    expect(engine({ role: "load", remote_addr: "x", send_media_report: true }).send_media_report).toBe(true);
    expect(
      engine({ role: "load", remote_addr: "x", send_media_report: true }, ["-send_media_report=false"])
        .send_media_report,
    ).toBe(false);
    expect(parseCommandLine(["-send_media_report"]).values.send_media_report).toBe(true);
    expect(() => engine({ role: "load", remote_addr: "x", send_media_report: "yes" })).toThrow(
      /"send_media_report" must be true or false/,
    );
  });
});
