import { describe, expect, test } from "bun:test";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { invite, register, request, response } from "../fixtures/sip.ts";

const T0 = Date.now() * 1000 - 60_000_000; // one minute ago, in µs

function hep(
  payload: string,
  o: {
    i?: number;
    proto?: number;
    src?: string;
    dst?: string;
    sport?: number;
    dport?: number;
    ipProtocol?: number;
    correlationId?: string;
    nodeName?: string;
  } = {},
) {
  return encodeHep3({
    ipFamily: (o.src ?? "10.0.0.1").includes(":") ? 6 : 4,
    ipProtocol: o.ipProtocol ?? 17,
    srcIp: o.src ?? "10.0.0.1",
    dstIp: o.dst ?? "10.0.0.2",
    srcPort: o.sport ?? 5060,
    dstPort: o.dport ?? 5060,
    timestampUs: T0 + (o.i ?? 0) * 1000,
    protoType: o.proto ?? 1,
    captureId: 2001,
    nodeName: o.nodeName ?? "edge-1",
    ...(o.correlationId ? { correlationId: o.correlationId } : {}),
    payload,
  });
}

describe("HEP ingest into the lake", () => {
  test("UDP, TCP and HTTP packets are searchable before any flush and survive a restart", async () => {
    await using dir = tempDir();
    const callId = `call-${crypto.randomUUID()}@test`;
    const call = { callId, from: "alice", to: "bob", fromTag: "ft1", toTag: "tt1" };
    {
      await using a = await startTestAppliance(dir.path, {
        storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 100000 } },
      });
      const { ingest, lake, nodeUrl } = a.app;
      expect(ingest && lake && nodeUrl).toBeTruthy();

      // UDP: INVITE + 100 + 180
      const udp = await Bun.udpSocket({});
      const udpPort = ingest!.listeners.udp!.port();
      udp.send(hep(invite({ ...call, extraHeaders: ["X-CID: leg-a"] }), { i: 0 }), udpPort, "127.0.0.1");
      udp.send(
        hep(response(100, "Trying", "INVITE", call), { i: 1, src: "10.0.0.2", dst: "10.0.0.1" }),
        udpPort,
        "127.0.0.1",
      );
      udp.send(
        hep(response(180, "Ringing", "INVITE", call), { i: 2, src: "10.0.0.2", dst: "10.0.0.1" }),
        udpPort,
        "127.0.0.1",
      );

      // TCP: 200 OK and ACK in one write, split in the middle of the second frame, then BYE
      const f200 = hep(response(200, "OK", "INVITE", call), { i: 3, src: "10.0.0.2", dst: "10.0.0.1", ipProtocol: 6 });
      const fAck = hep(request("ACK", { ...call, cseq: 1 }), { i: 4, ipProtocol: 6 });
      const stream = new Uint8Array([...f200, ...fAck]);
      const cut = f200.length + 10;
      const tcp = await Bun.connect({
        hostname: "127.0.0.1",
        port: ingest!.listeners.tcp!.port(),
        socket: { data() {} },
      });
      tcp.write(stream.subarray(0, cut));
      tcp.flush();
      await Bun.sleep(20);
      tcp.write(stream.subarray(cut));
      tcp.write(new TextEncoder().encode("garbage!"));
      tcp.write(hep(request("BYE", { ...call, cseq: 2 }), { i: 5, ipProtocol: 6 }));
      tcp.flush();

      // HTTP: 200 OK for BYE, a REGISTER, an RTCP JSON report and a log line with correlation ids
      const body = new Uint8Array([
        ...hep(response(200, "OK", "BYE", { ...call, cseq: 2 }), { i: 6, src: "10.0.0.2", dst: "10.0.0.1" }),
        ...hep(register({ callId: `reg-${callId}`, user: "carol", expires: 1800 }), { i: 7, src: "10.0.0.9" }),
        ...hep(
          JSON.stringify({
            type: 200,
            ssrc: 1234,
            report_count: 1,
            report_blocks: [{ fraction_lost: 0, ia_jitter: 12 }],
          }),
          {
            i: 8,
            proto: 5,
            correlationId: callId,
          },
        ),
        ...hep("custom log line", { i: 9, proto: 100, correlationId: callId }),
        ...hep("a protocol nobody seeded", { i: 10, proto: 77, correlationId: callId }),
      ]);
      const res = await fetch(`${nodeUrl}/api/v1/hep`, { method: "POST", body });
      expect(res.status).toBe(202);
      expect(((await res.json()) as { accepted: number }).accepted).toBe(5);

      const rows = await waitFor("7 call messages visible", async () => {
        await lake!.sync();
        const r = await lake!.query(
          `SELECT * FROM svc_lake.main.hep_proto_1_call WHERE session_id = $1 ORDER BY timestamp`,
          [callId],
        );
        return r.rows.length === 7 ? r.rows : undefined;
      });
      expect(rows.map((r) => r.event)).toEqual(["INVITE", "100", "180", "200", "ACK", "BYE", "200"]);
      const inv = rows[0]!;
      expect(inv).toMatchObject({
        caller: "alice",
        callee: "bob",
        src_ip: "10.0.0.1",
        dst_ip: "10.0.0.2",
        src_port: 5060,
        dst_port: 5060,
        method: "INVITE",
        cseq_method: "INVITE",
        proto_type: 1,
        protocol: "UDP",
        node_id: 2001,
        cid: "leg-a",
      });
      expect(String(inv.payload)).toContain('From: "Alice \\"A\\"" <sip:alice@example.com>');
      expect(String(inv.payload).endsWith("a=sendrecv\r\n")).toBe(true);
      const extra = JSON.parse(String(inv.data_extra));
      expect(extra).toMatchObject({
        from_tag: "ft1",
        node_name: "edge-1",
        capture_id: 2001,
        user_agent: "svc-test/1.0",
      });
      expect(rows[3]).toMatchObject({ response_code: 200, method: null, protocol: "TCP" });
      expect(JSON.parse(String(rows[3]!.data_extra)).to_tag).toBe("tt1");
      expect(new Date(String(inv.timestamp) + "Z").getTime()).toBe(Math.floor(T0 / 1000));

      const reg = await lake!.query(
        `SELECT aor, contact, expires, user_agent, caller FROM svc_lake.main.hep_proto_1_registration WHERE session_id = $1`,
        [`reg-${callId}`],
      );
      expect(reg.rows).toEqual([
        {
          aor: "sip:carol@example.com",
          contact: "sip:carol@10.0.0.9:5060",
          expires: 1800,
          user_agent: "svc-phone/3.1",
          caller: "carol",
        },
      ]);
      const bye200 = await lake!.query(
        `SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id = $1 AND cseq_method = 'BYE'`,
        [callId],
      );
      expect(bye200.rows[0]!.n).toBe(2);

      const rtcp = await waitFor("RTCP row", async () => {
        await lake!.sync();
        const r = await lake!.query(
          `SELECT payload, event, session_id FROM svc_lake.main.hep_proto_5_default WHERE session_id = $1`,
          [callId],
        );
        return r.rows[0];
      });
      expect(JSON.parse(String(rtcp.payload)).ssrc).toBe(1234);
      const p77 = await waitFor("proto 77 table created on first sight", async () => {
        await lake!.sync();
        if (!lake!.table("main.hep_proto_77_default")) return undefined;
        const r = await lake!.query(`SELECT payload FROM svc_lake.main.hep_proto_77_default WHERE session_id = $1`, [
          callId,
        ]);
        return r.rows[0];
      });
      expect(p77.payload).toBe("a protocol nobody seeded");

      const metrics = a.app.metrics.render();
      expect(metrics).toMatch(/svc_hep_packets_received_total\{transport="udp"\} 3/);
      expect(metrics).toMatch(/svc_hep_packets_received_total\{transport="tcp"\} 3/);
      expect(metrics).toMatch(/svc_hep_stream_resync_total\{transport="tcp"\} [1-9]/);
      udp.close();
      tcp.end();
    }
    // Stopped: everything flushed to Parquet. Reopen and read it back from the files.
    {
      await using a = await startTestAppliance(dir.path);
      const r = await a.app.lake!.query(
        `SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id = $1`,
        [callId],
      );
      expect(r.rows[0]!.n).toBe(7);
      const files = new Bun.Glob("main/hep_proto_1_call/**/*.parquet").scanSync({ cwd: `${dir.path}/lake` });
      expect([...files].length).toBeGreaterThan(0);
    }
  });

  test("malformed packets are counted by reason and never stop the listener", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path);
    const { ingest, lake, metrics } = a.app;
    const udp = await Bun.udpSocket({});
    const port = ingest!.listeners.udp!.port();
    udp.send(new Uint8Array([1, 2, 3]), port, "127.0.0.1");
    udp.send(new TextEncoder().encode("HEP3\u0000\u0010xxxxxxxxxx"), port, "127.0.0.1");
    const good = hep(request("OPTIONS", { callId: "opt-1", from: "mon", to: "srv" }), {});
    udp.send(good, port, "127.0.0.1");
    await waitFor("OPTIONS row", async () => {
      await lake!.sync();
      return (
        (await lake!.query(`SELECT 1 FROM svc_lake.main.hep_proto_1_default WHERE session_id = 'opt-1'`)).rows
          .length === 1
      );
    });
    const text = metrics.render();
    expect(text).toMatch(/svc_hep_packets_dropped_total\{reason="too_short"\} 1/);
    expect(text).toMatch(/svc_hep_packets_dropped_total\{reason="truncated_chunk"\} 1/);
    udp.close();
  });
});
