/**
 * The screens a VoIP engineer judges the appliance by, photographed (docs/screenshots/README.md):
 * the Ask widget's "Understood … · Ignored …" line with its rows and a question it cannot map
 * (docs/MCP.md "Answers"), Live mode filtered by the search form (docs/STREAM.md "In the
 * dashboard"), a call's QoS tab from RTCP sent as binary packets (docs/CALL-VIEW.md "Binary RTCP")
 * and of an imported PCAP's call measured from its RTP (docs/CALL-VIEW.md "Computed from RTP"),
 * and the call window's note on shifted times (docs/CALL-VIEW.md "Shifted times"). Each picture must
 * be a real page (over 5 kB) and each step asserts the text the screen is about. With
 * SVC_UPDATE_SCREENSHOTS=1 they are written to docs/screenshots/.
 */
import { expect } from "bun:test";
import { statSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { encodeHep3, ntpMiddle32 } from "../../src/hep/index.ts";
import { rawSenderReport } from "../../src/loadgen/rtcp.ts";
import { writePcap, type PcapRecord } from "../../src/pcap/index.ts";
import { buildUi } from "../../ui/build.ts";
import { startTestAppliance } from "../appliance.ts";
import { invite, request, response, type CallParams } from "../fixtures/sip.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { applianceConfig, ingestCalls, PASSWORD } from "../integration/mcp-harness.ts";
import { captureOn, hep, login, udpSender } from "../integration/stream-helpers.ts";
import { CHROMIUM_ARGS, signIn } from "./ui-live-harness.ts";

/** A binary RTCP SR with one report block: `lost` of 256 lost, `jitter` in 8 kHz units (docs/CALL-VIEW.md "Binary RTCP"). */
function rtcp(ssrc: number, peer: number, atMs: number, lost: number, total: number, jitter: number): Uint8Array {
  const b = rawSenderReport(ssrc, peer, atMs);
  const dv = new DataView(b.buffer);
  dv.setUint32(32, (lost << 24) | total);
  dv.setUint32(40, jitter);
  dv.setUint32(44, ntpMiddle32(atMs - 300));
  dv.setUint32(48, 6554);
  return b;
}

/** A call answered and acknowledged, its agent clock in 2012 (outside the accepted window). */
function oldCall(callId: string): Uint8Array[] {
  const p: CallParams = { callId, from: "1001", to: "1002", fromTag: "f-1", toTag: "t-1" };
  const [A, B] = ["10.41.0.1", "10.41.0.2"];
  const t0 = Date.UTC(2012, 0, 15, 8, 30) * 1000;
  const msgs: Array<[string, string, string]> = [
    [A, B, invite({ ...p, srcIp: A })],
    [B, A, response(180, "Ringing", "INVITE", p)],
    [B, A, response(200, "OK", "INVITE", p)],
    [A, B, request("ACK", { ...p, cseq: 1 })],
  ];
  return msgs.map(([src, dst, payload], i) =>
    encodeHep3({
      srcIp: src,
      dstIp: dst,
      srcPort: 5060,
      dstPort: 5060,
      timestampUs: t0 + i * 100_000,
      protoType: 1,
      captureId: 801,
      payload,
    }),
  );
}

/** A G.711 call and 200 RTP packets A → B with 6 lost and 0-9 ms arrival jitter, as a PCAP (docs/CALL-VIEW.md "Computed from RTP"). */
function rtpCapture(callId: string, t0Us: number): Uint8Array {
  const enc = new TextEncoder();
  const [A, B] = [
    { ip: "192.0.2.10", rtp: 40000 },
    { ip: "192.0.2.20", rtp: 50000 },
  ];
  const sdp = (ip: string, port: number) =>
    `v=0\r\no=- 1 1 IN IP4 ${ip}\r\ns=-\r\nc=IN IP4 ${ip}\r\nt=0 0\r\nm=audio ${port} RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n`;
  const sip = (start: string, cseq: string, body = "") =>
    enc.encode(
      `${start}\r\nVia: SIP/2.0/UDP ${A.ip}:5060;branch=z9hG4bK-rtp1\r\nFrom: <sip:alice@example.com>;tag=a1\r\nTo: <sip:2002@example.com>${start.startsWith("SIP/") ? ";tag=b1" : ""}\r\n` +
        `Call-ID: ${callId}\r\nCSeq: ${cseq}\r\n${body ? "Content-Type: application/sdp\r\n" : ""}Content-Length: ${enc.encode(body).length}\r\n\r\n${body}`,
    );
  const recs: PcapRecord[] = [];
  const add = (src: typeof A, dst: typeof A, sipPort: boolean, payload: Uint8Array, at: number) =>
    recs.push({
      timestampUs: at,
      srcIp: src.ip,
      dstIp: dst.ip,
      srcPort: sipPort ? 5060 : src.rtp,
      dstPort: sipPort ? 5060 : dst.rtp,
      payload,
    });
  add(A, B, true, sip("INVITE sip:2002@example.com SIP/2.0", "1 INVITE", sdp(A.ip, A.rtp)), t0Us);
  add(B, A, true, sip("SIP/2.0 200 OK", "1 INVITE", sdp(B.ip, B.rtp)), t0Us + 50_000);
  add(A, B, true, sip("ACK sip:2002@example.com SIP/2.0", "1 ACK"), t0Us + 60_000);
  const start = t0Us + 100_000;
  for (let i = 0; i < 200; i++) {
    if ([40, 41, 42, 90, 150, 151].includes(i)) continue;
    const b = new Uint8Array(12 + 160).fill(0xff);
    const dv = new DataView(b.buffer);
    dv.setUint16(0, 0x8000);
    dv.setUint16(2, 1000 + i);
    dv.setUint32(4, 160_000 + i * 160);
    dv.setUint32(8, 0x5eed);
    add(A, B, false, b, start + i * 20_000 + ((i * 7919) % 10) * 1000);
  }
  add(A, B, true, sip("BYE sip:2002@example.com SIP/2.0", "2 BYE"), start + 4_100_000);
  add(B, A, true, sip("SIP/2.0 200 OK", "2 BYE"), start + 4_110_000);
  return writePcap(recs.sort((p, q) => p.timestampUs - q.timestampUs));
}

peerTest(
  "screens an engineer judges: Ask understood / not understood, filtered Live, QoS from binary RTCP and from RTP, shifted times",
  [PEERS.chromium],
  async () => {
    await buildUi();
    await using dir = tempDir("svc-ui-screens-trust-");
    const out =
      process.env.SVC_UPDATE_SCREENSHOTS === "1" ? resolve(import.meta.dir, "../../docs/screenshots") : dir.path;
    const base = applianceConfig();
    await using a = await startTestAppliance(dir.path, {
      ...base,
      coordinator: { ...base.coordinator, hep_stream: { enable: true } },
    });
    const port = a.app.ingest!.listeners.udp!.port();
    const lake = a.app.lake!;
    const calls = await ingestCalls(a);
    const shifted = `shift-2012-${crypto.randomUUID().slice(0, 8)}@pbx-east`;
    const udp = await udpSender(port);
    // RTCP of the 1001 call both ways, three reports each, as binary packets correlated by Call-ID.
    const [x, y] = [
      { ip: "10.31.0.1", port: 40001, ssrc: 0x1a2b3c4d },
      { ip: "10.31.0.2", port: 40001, ssrc: 0x5e6f7a8b },
    ];
    const reports: Uint8Array[] = [];
    for (const [i, [lost, total, jitter]] of (
      [
        [5, 3, 96],
        [26, 10, 160],
        [13, 14, 128],
      ] as const
    ).entries()) {
      const at = calls.t0Ms + 1000 + i * 1000;
      for (const [s, d, l] of [
        [x, y, lost],
        [y, x, Math.floor(lost / 4)],
      ] as const) {
        const payload = rtcp(s.ssrc, d.ssrc, at, l, total, jitter);
        reports.push(
          encodeHep3({
            srcIp: s.ip,
            dstIp: d.ip,
            srcPort: s.port,
            dstPort: d.port,
            ipProtocol: 17,
            protoType: 5,
            timestampUs: at * 1000,
            captureId: 2001,
            correlationId: calls.invite,
            payload,
          }),
        );
      }
    }
    udp.send([...reports, ...oldCall(shifted)]);
    await waitFor("the RTCP and the shifted call in the lake", async () => {
      await lake.sync();
      if (!lake.table("main.hep_proto_5_default")) return false;
      const r = await lake.query(
        "SELECT (SELECT count(*) FROM svc_lake.main.hep_proto_5_default) AS rtcp, (SELECT count(*) FROM svc_lake.main.hep_proto_1_call WHERE session_id = $1) AS sip",
        [shifted],
      );
      return Number(r.rows[0]!.rtcp) === reports.length && Number(r.rows[0]!.sip) === 4;
    });
    const { token } = await login(a.app.coordinatorUrl!, "admin", PASSWORD);
    // A PCAP with the call's RTP, imported: its QoS is computed from the RTP (docs/CALL-VIEW.md "Computed from RTP").
    const rtpCall = `rtp-import-${crypto.randomUUID().slice(0, 8)}@pbx-east`;
    const upload = new FormData();
    upload.append("file", new File([rtpCapture(rtpCall, (Date.now() - 120_000) * 1000).slice()], "call-with-rtp.pcap"));
    const imported = await fetch(`${a.app.coordinatorUrl}/api/v4/imports/pcap`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: upload,
    });
    expect({ status: imported.status, body: imported.status === 201 ? "" : await imported.text() }).toEqual({
      status: 201,
      body: "",
    });
    using _sentinel = await captureOn(
      `${a.app.coordinatorUrl!.replace(/^http/, "ws")}/api/v4/stream/hep?access_token=${token}`,
      udp.send,
    );

    const browser: Browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      const shot = async (name: string) => {
        const file = join(out, name);
        await page.screenshot({ path: file });
        expect(statSync(file).size).toBeGreaterThan(5_000);
      };
      await signIn(page, a, PASSWORD);
      const form = page.getByRole("form", { name: "Search call" });

      // Live mode filtered by From user 1001: only 1001's messages arrive in the table.
      await form.getByLabel("From user").fill("1001");
      await form.getByRole("button", { name: "Search" }).click();
      await page.getByRole("button", { name: "Live", pressed: false }).click();
      const note = page.getByRole("note", { name: "Live filters" });
      await note.filter({ hasText: "filtered by from user 1001" }).waitFor();
      await page
        .getByRole("status")
        .filter({ hasText: /^Live · / })
        .waitFor();
      const t0 = Date.now() * 1000;
      const live = [1, 2, 3].map((n) => ({
        callId: `live-1001-${n}-${crypto.randomUUID().slice(0, 8)}@pbx-east`,
        from: "1001",
        to: `200${n}`,
        toTag: `t${n}`,
      }));
      const other = {
        callId: `live-3003-${crypto.randomUUID().slice(0, 8)}@pbx-east`,
        from: "3003",
        to: "2002",
        toTag: "t9",
      };
      udp.send([
        hep({ srcIp: "10.30.0.2", dstIp: "10.30.0.1", tsUs: t0, payload: invite(other) }),
        ...live.flatMap((c, i) => [
          hep({
            srcIp: "10.30.0.1",
            dstIp: "10.30.0.2",
            tsUs: t0 + 1000 + i * 10_000,
            payload: invite({ ...c, srcIp: "10.30.0.1" }),
          }),
          hep({
            srcIp: "10.30.0.2",
            dstIp: "10.30.0.1",
            tsUs: t0 + 5000 + i * 10_000,
            payload: response(180, "Ringing", "INVITE", c),
          }),
        ]),
      ]);
      const table = page.getByRole("table", { name: "Live messages" });
      for (const c of live)
        await table
          .getByRole("row", { name: `Open call ${c.callId}` })
          .first()
          .waitFor();
      expect(await table.getByRole("row", { name: `Open call ${other.callId}` }).count()).toBe(0);
      expect(await note.textContent()).toContain("filtered by from user 1001");
      await shot("live-filters.png");
      await page.getByRole("button", { name: "Live", pressed: true }).click();

      // A call's QoS tab from the binary RTCP: jitter, loss and MOS per direction.
      await form.getByLabel("From user").fill("");
      await form.getByLabel("Call-ID").fill(calls.invite);
      await form.getByRole("button", { name: "Search" }).click();
      await page
        .getByRole("table", { name: "Search results" })
        .getByRole("row", { name: `Open call ${calls.invite}` })
        .first()
        .click();
      let dialog = page.getByRole("dialog");
      await dialog.getByRole("tab", { name: "QoS" }).click();
      const stream = dialog.getByRole("region", { name: `Stream ${x.ip}:${x.port} to ${y.ip}:${y.port}` });
      await stream.waitFor();
      const stats = await stream.getByRole("definition").allTextContents();
      expect(stats[0]).toBe("3"); // reports
      expect(stats[1]).toMatch(/^20(\.0+)?\s*ms$/); // max jitter: 160 units at 8 kHz
      expect(stats[2]).toMatch(/^10\.2\s*%$/); // max loss: 26/256
      expect(stats[4]).toMatch(/^\d\.\d+\s*\/\s*\d\.\d+$/); // MOS avg / min
      expect(await dialog.getByRole("region", { name: /^Stream / }).count()).toBe(2);
      await shot("qos-binary-rtcp.png");
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });

      // The imported call's QoS, computed from its RTP: 6 of 200 packets lost.
      await form.getByLabel("Call-ID").fill(rtpCall);
      await form.getByRole("button", { name: "Search" }).click();
      await page
        .getByRole("table", { name: "Search results" })
        .getByRole("row", { name: `Open call ${rtpCall}` })
        .first()
        .click();
      dialog = page.getByRole("dialog");
      await dialog.getByRole("tab", { name: "QoS" }).click();
      const media = dialog.getByRole("region", { name: "Stream 192.0.2.10:40000 to 192.0.2.20:50000" });
      await media.getByText("computed from RTP", { exact: true }).waitFor();
      expect(await media.getByRole("definition").nth(3).textContent()).toBe("6");
      await shot("qos-computed-rtp.png");
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });

      // The call window of a call whose agent clock was in 2012: shifted, spacing kept.
      await form.getByLabel("Call-ID").fill(shifted);
      await form.getByRole("button", { name: "Search" }).click();
      await page
        .getByRole("table", { name: "Search results" })
        .getByRole("row", { name: `Open call ${shifted}` })
        .first()
        .click();
      dialog = page.getByRole("dialog");
      await dialog.getByText("4 messages").waitFor();
      await dialog.getByText("loading…", { exact: true }).waitFor({ state: "detached" }); // the timeline's events
      expect(await dialog.getByRole("note").textContent()).toMatch(
        /^Times shifted by 14 y \d+ d: the agent's clock was outside the accepted window; spacing kept$/,
      );
      await shot("call-time-shift.png");
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });

      // The Ask widget: what it understood and ignored, with the rows; then a question it cannot map.
      await page.getByLabel("Add widget").selectOption({ label: "Ask" });
      const ask = page.getByRole("region", { name: "Ask" });
      await ask.getByLabel("Question").fill("INVITEs from 1001 in the last hour with choppy audio");
      await ask.getByRole("button", { name: "Ask", exact: true }).click();
      const answer = ask.getByRole("table", { name: "Answer" });
      await answer.waitFor();
      expect(await ask.getByLabel("Understood").textContent()).toBe(
        "Understood: method INVITE, from user 1001, last 1 h · Ignored: 'choppy', 'audio'",
      );
      // 1001's INVITEs: the three live calls, the shifted one and the first one (after the header row).
      const rows = await answer.getByRole("row").allTextContents();
      expect(rows).toHaveLength(6);
      expect(rows.slice(1).every((r) => r.includes("INVITE") && r.includes("1001"))).toBe(true);
      expect([calls.invite, shifted].map((id) => rows.some((r) => r.includes(id)))).toEqual([true, true]);
      await page.getByText("Ask added", { exact: true }).waitFor({ state: "detached" }); // the toast, off the picture
      await ask.scrollIntoViewIfNeeded();
      await shot("ask-understood.png");
      await ask.getByLabel("Question").fill("what is the weather");
      await ask.getByRole("button", { name: "Ask", exact: true }).click();
      await ask
        .getByLabel("Understood")
        .filter({ hasText: /^Not understood: no word maps to a filter/ })
        .waitFor();
      expect(await answer.count()).toBe(0);
      await ask.scrollIntoViewIfNeeded();
      await shot("ask-not-understood.png");
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
      udp.close();
    }
  },
  180_000,
);
