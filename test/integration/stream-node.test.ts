/**
 * Node `/stream` (docs/STREAM.md) against real HEP over UDP
 * loopback through the ingest thread: frame members, every filter combination, history, bad
 * input answered 400 before the upgrade, the 33rd subscriber refused, a subscriber that never
 * reads losing only its own frames (counted) while another gets every one, the rate limit and
 * ring overflow counted, and /stream absent while ingest.hep_stream.enable is off. The payload
 * rules and the slot shares have their own files (stream-payload, stream-slots).
 */
import { describe, expect, test } from "bun:test";
import { startTestAppliance } from "../appliance.ts";
import { invite, register, request, response, type CallParams } from "../fixtures/sip.ts";
import { tempDir, waitFor } from "../harness.ts";
import pkg from "../../package.json";
import {
  WS_VERSION,
  captureOn,
  connectStream,
  hep,
  rawHandshake,
  series,
  udpSender,
  type StreamClient,
} from "./stream-helpers.ts";

const call: CallParams = {
  callId: `live-${crypto.randomUUID()}@pbx`,
  from: "alice",
  to: "bob",
  fromTag: "fa",
  toTag: "tb",
};
/** RTCP sender report (RFC 3550 section 6.4.1): binary, with zero octets. */
const RTCP = new Uint8Array([
  0x80, 0xc8, 0x00, 0x06, 0x12, 0x34, 0x56, 0x78, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5,
]);

/** The traffic: label, HEP type and payload; each packet's source port (6000 + index) names it in the frames. */
const TRAFFIC: Array<[label: string, proto: number, payload: string | Uint8Array]> = [
  ["INVITE", 1, invite(call)],
  ["100", 1, response(100, "Trying", "INVITE", call)],
  ["200-INVITE", 1, response(200, "OK", "INVITE", call)],
  ["ACK", 1, request("ACK", { ...call, cseq: 1 })],
  ["BYE", 1, request("BYE", call)],
  ["200-BYE", 1, response(200, "OK", "BYE", { ...call, cseq: 2 })],
  ["REGISTER", 1, register({ callId: `reg-${call.callId}`, user: "carol" })],
  [
    "401",
    1,
    response(401, "Unauthorized", "REGISTER", { callId: `reg-${call.callId}`, from: "carol", to: "carol", cseq: 1 }),
  ],
  ["OPTIONS", 1, request("OPTIONS", { ...call, callId: `opt-${call.callId}`, cseq: 7 })],
  ["RTCP", 5, RTCP],
  ["LOG", 100, "a log line"],
  ["NOT-SIP", 1, "this is not a SIP message"],
];
const T0_US = Date.now() * 1000;
const packets = TRAFFIC.map(([, proto, payload], i) =>
  hep({ proto, payload, srcPort: 6000 + i, dstPort: 5080, captureId: 2001, tsUs: T0_US + i * 1000 }),
);
const labelOf = (port: number) => TRAFFIC[port - 6000]?.[0] ?? `port ${port}`;
const labels = (c: StreamClient) => c.frames.filter((f) => f.src_port >= 6000).map((f) => labelOf(f.src_port));

/** Query → the labels it must deliver, in order. `method` filters SIP only: other protocols pass. */
const FILTERS: Array<[string, string[]]> = [
  ["", TRAFFIC.map(([l]) => l)],
  ["proto=1", ["INVITE", "100", "200-INVITE", "ACK", "BYE", "200-BYE", "REGISTER", "401", "OPTIONS", "NOT-SIP"]],
  ["proto=5", ["RTCP"]],
  ["proto=5&proto=100", ["RTCP", "LOG"]],
  ["proto=34", []],
  ["method=INVITE", ["INVITE", "100", "200-INVITE", "RTCP", "LOG"]],
  ["method=INVITE&method=bye", ["INVITE", "100", "200-INVITE", "BYE", "200-BYE", "RTCP", "LOG"]],
  ["only_requests=1", ["INVITE", "ACK", "BYE", "REGISTER", "OPTIONS", "RTCP", "LOG", "NOT-SIP"]],
  ["proto=1&only_requests=true", ["INVITE", "ACK", "BYE", "REGISTER", "OPTIONS", "NOT-SIP"]],
  ["proto=1&method=register&only_requests=1", ["REGISTER"]],
  ["proto=1&method=REGISTER&only_requests=0", ["REGISTER", "401"]],
  ["proto=5&method=INVITE", ["RTCP"]],
  ["proto=1&method=INVITE&only_requests=1&include_payload=1", ["INVITE"]],
  ["proto=1&proto=5&method=BYE&include_payload=1", ["BYE", "200-BYE", "RTCP"]],
  [`proto=1&callid=${encodeURIComponent(call.callId)}`, ["INVITE", "100", "200-INVITE", "ACK", "BYE", "200-BYE"]],
  [
    `callid=${encodeURIComponent(`reg-${call.callId}`)}&callid=${encodeURIComponent(`opt-${call.callId}`)}`,
    ["REGISTER", "401", "OPTIONS", "RTCP", "LOG"],
  ],
  [`proto=1&callid=${encodeURIComponent(call.callId.toUpperCase())}`, []],
  [`proto=1&callid=${encodeURIComponent(call.callId)}&method=BYE&only_requests=1`, ["BYE"]],
];

describe("node /stream", () => {
  test("subscribers are the npm ws client pinned in package.json, not the runtime's built-in copy", () => {
    expect(WS_VERSION).toBe(pkg.devDependencies.ws);
  });

  test("every filter combination gets exactly its events; frames carry the members of docs/STREAM.md and never the payload", async () => {
    await using dir = tempDir();
    // Every subscriber comes from 127.0.0.1: its share is raised past the filters' count.
    await using a = await startTestAppliance(dir.path, {
      ingest: { hep_stream: { enable: true, rate_per_sub_pps: 0, max_subscribers_per_address: 32 } },
    });
    const base = `${a.app.nodeUrl!.replace(/^http/, "ws")}/stream`;
    const udp = await udpSender(a.app.ingest!.listeners.udp!.port());
    using sentinel = await captureOn(`${base}?include_payload=1`, udp.send);
    const subs = FILTERS.map(([q]) => connectStream(q ? `${base}?${q}` : base));
    await Promise.all(subs.map((s) => s.opened));
    await waitFor(
      "every subscriber registered",
      () => series(a.app.metrics.render(), "svc_stream_subscribers") === FILTERS.length + 1,
    );
    udp.send(packets);
    for (const [i, [q, want]] of FILTERS.entries())
      await waitFor(
        `"${q}" to get ${want.length} events`,
        () => labels(subs[i]!).length >= want.length || want.length === 0,
      );
    // A last event every filter lets through or not: once the sentinel has it, nothing more is on its way.
    udp.send([hep({ proto: 100, srcPort: 3, payload: "end" })]);
    await waitFor("the end marker", () => sentinel.frames.some((f) => f.src_port === 3));
    for (const [i, [q, want]] of FILTERS.entries())
      expect({ q, events: labels(subs[i]!) }).toEqual({ q, events: want });
    // The node's clients are anonymous: include_payload=1 is accepted and the payload left out (docs/STREAM.md "Security").
    for (const [i, [q]] of FILTERS.entries())
      for (const f of subs[i]!.frames) expect({ q, payload: "payload" in f }).toEqual({ q, payload: false });

    const all = subs[0]!.frames;
    const byLabel = (l: string) => all.find((f) => labelOf(f.src_port) === l)!;
    expect(byLabel("INVITE")).toEqual({
      ts: Math.floor(T0_US / 1000),
      proto: 1,
      src_ip: "10.0.0.1",
      src_port: 6000,
      dst_ip: "10.0.0.2",
      dst_port: 5080,
      node_id: 2001,
      sip: {
        method: "INVITE",
        resp_code: "",
        resp_text: "",
        callid: call.callId,
        cseq: "1 INVITE",
        from_user: "alice",
        to_user: "bob",
        ruri_user: "bob",
      },
    });
    expect(byLabel("401").sip).toEqual({
      method: "REGISTER",
      resp_code: "401",
      resp_text: "Unauthorized",
      callid: `reg-${call.callId}`,
      cseq: "1 REGISTER",
      from_user: "carol",
      to_user: "carol",
      ruri_user: "",
    });
    expect(byLabel("200-BYE").ts).toBe(Math.floor((T0_US + 5000) / 1000));
    // Not SIP, or SIP that does not parse: no sip member.
    for (const l of ["RTCP", "LOG", "NOT-SIP"]) expect(byLabel(l).sip).toBeUndefined();
    expect(sentinel.frames.some((f) => "payload" in f)).toBe(false);
    for (const s of subs) s.close();
    udp.close();
  }, 60_000);

  test("history replays the newest matching events first, then live ones; ring overflow is counted", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      ingest: { hep_stream: { enable: true, buffer_size: 8, rate_per_sub_pps: 0, max_subscribers_per_address: 8 } },
    });
    const base = `${a.app.nodeUrl!.replace(/^http/, "ws")}/stream`;
    const udp = await udpSender(a.app.ingest!.listeners.udp!.port());
    using sentinel = await captureOn(base, udp.send);
    const invites = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) =>
        hep({ srcPort: 7000 + from + i, payload: invite({ ...call, callId: `h-${from + i}` }) }),
      );
    // Six INVITEs and four RTCP into a ring of 8: the two oldest (and the probes) leave it.
    udp.send([
      ...invites(0, 3),
      hep({ proto: 5, srcPort: 8000, payload: RTCP }),
      ...invites(3, 3),
      ...Array.from({ length: 3 }, (_, i) => hep({ proto: 5, srcPort: 8001 + i, payload: RTCP })),
    ]);
    await waitFor(
      "the sentinel to get the ten events",
      () => sentinel.frames.filter((f) => f.src_port >= 7000).length === 10,
    );
    expect(
      series(a.app.metrics.render(), "svc_stream_events_dropped_total", 'reason="ring_overflow"'),
    ).toBeGreaterThanOrEqual(2);

    using three = connectStream(`${base}?proto=1&history=3`);
    using every = connectStream(`${base}?proto=1&history=100`);
    using none = connectStream(`${base}?proto=1`);
    using rtcp = connectStream(`${base}?proto=5&history=2`);
    await Promise.all([three.opened, every.opened, none.opened, rtcp.opened]);
    await waitFor(
      "the replays",
      () => three.frames.length === 3 && every.frames.length === 4 && rtcp.frames.length === 2,
    );
    const ports = (c: StreamClient) => c.frames.map((f) => f.src_port);
    expect(ports(three)).toEqual([7003, 7004, 7005]);
    // Of six INVITEs the ring kept the last four (8 slots, the four RTCP took the rest).
    expect(ports(every)).toEqual([7002, 7003, 7004, 7005]);
    expect(ports(rtcp)).toEqual([8002, 8003]);
    expect(none.frames).toEqual([]);
    // Live events follow the replay.
    udp.send(invites(6, 1));
    await waitFor("the live event", () => three.frames.length === 4 && none.frames.length === 1);
    expect(ports(three)).toEqual([7003, 7004, 7005, 7006]);
    expect(ports(none)).toEqual([7006]);

    // Nobody left: with ingest.hep_stream.enable the ring keeps filling (history for the next subscriber).
    for (const c of [sentinel, three, every, none, rtcp]) c.close();
    await waitFor("no subscriber", () => series(a.app.metrics.render(), "svc_stream_subscribers") === 0);
    const rows = () => series(a.app.metrics.render(), "svc_hep_rows_accepted_total", 'table="main.hep_proto_1_call"');
    const events = series(a.app.metrics.render(), "svc_stream_events_total");
    // Each packet waited for as a row: a hand-over that read the flag lies between (capture would stop there).
    for (const n of [7, 8, 9]) {
      const before = rows();
      udp.send(invites(n, 1));
      await waitFor("the row", () => rows() === before + 1);
    }
    await waitFor(
      "the events in the ring with nobody subscribed",
      () => series(a.app.metrics.render(), "svc_stream_events_total") === events + 3,
    );
    using later = connectStream(`${base}?proto=1&history=2`);
    await waitFor("its replay", () => later.frames.length === 2);
    expect(ports(later)).toEqual([7008, 7009]);
    udp.close();
  }, 60_000);

  test.each([
    ["on the ingest thread", 1],
    ["on the main thread", 0],
  ])(
    "history replays packets sent before the first subscriber connected (listeners %s)",
    async (_, threads) => {
      await using dir = tempDir();
      await using a = await startTestAppliance(dir.path, {
        ingest: { hep: { threads }, hep_stream: { enable: true } },
      });
      const base = `${a.app.nodeUrl!.replace(/^http/, "ws")}/stream`;
      const udp = await udpSender(a.app.ingest!.listeners.udp!.port());
      expect(series(a.app.metrics.render(), "svc_stream_subscribers")).toBe(0);
      // Nobody has ever subscribed: the packets reach the ring all the same.
      udp.send([0, 1, 2].map((i) => hep({ srcPort: 7100 + i, payload: invite({ ...call, callId: `before-${i}` }) })));
      udp.send([hep({ proto: 5, srcPort: 7103, payload: RTCP })]);
      await waitFor(
        "the four events in the broker",
        () => series(a.app.metrics.render(), "svc_stream_events_total") === 4,
      );
      using first = connectStream(`${base}?proto=1&history=10`);
      await first.opened;
      await waitFor("the replay", () => first.frames.length === 3);
      expect(first.frames.map((f) => [f.src_port, f.sip?.callid])).toEqual([
        [7100, "before-0"],
        [7101, "before-1"],
        [7102, "before-2"],
      ]);
      // Then live events.
      udp.send([hep({ srcPort: 7104, payload: invite({ ...call, callId: "after" }) })]);
      await waitFor("the live event", () => first.frames.length === 4);
      expect(first.frames[3]!.sip?.callid).toBe("after");
      udp.close();
    },
    60_000,
  );

  test("unknown parameters and values answer 400 before the upgrade, naming the parameter", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, { ingest: { hep_stream: { enable: true } } });
    const base = `${a.app.nodeUrl}/stream`;
    const cases: Array<[string, string, RegExp]> = [
      ["protocol=1", "protocol", /unknown parameter "protocol"/],
      ["proto=sip", "proto", /proto "sip" is not a HEP protocol type/],
      ["proto=256", "proto", /integer 0-255/],
      ["method=INVTE", "method", /method "INVTE" is not a SIP method/],
      ["only_requests=yes", "only_requests", /only_requests must be 1 or 0/],
      ["include_payload=2", "include_payload", /include_payload must be 1 or 0/],
      ["history=-1", "history", /history must be a whole number/],
      ["history=1&history=2", "history", /history may be given once/],
      ["callid=", "callid", /callid must not be empty/],
    ];
    for (const [q, field, message] of cases) {
      const r = await rawHandshake(`${base}?${q}`);
      expect({ q, status: r.status }).toEqual({ q, status: 400 });
      const body = JSON.parse(r.body) as { error: string; message: string; fields: string[] };
      expect(body.error).toBe("VALIDATION");
      expect(body.message).toMatch(message);
      expect(body.fields).toEqual([field]);
    }
    // A browser-style client sees the refused handshake as a closed socket.
    const c = connectStream(`${base.replace(/^http/, "ws")}?proto=x`);
    await expect(c.opened).rejects.toThrow("Unexpected server response: 400");
    // A plain GET (no upgrade) answers the filter it would get: a client checks it first.
    const plain = await fetch(`${base}?proto=1&proto=5&method=invite&callid=a%40pbx&history=20000&include_payload=1`);
    expect(plain.status).toBe(200);
    expect(await plain.json()).toEqual({
      data: {
        protocol: "websocket",
        filter: {
          proto: [1, 5],
          method: ["INVITE"],
          callid: ["a@pbx"],
          only_requests: false,
          include_payload: false,
          history: 10000,
        },
      },
    });
  }, 60_000);

  test("the 33rd subscriber is refused with close code 1013 and the reason; a freed slot is taken again", async () => {
    await using dir = tempDir();
    // One address may hold every slot here: this is the cap itself (the shares: stream-slots.test.ts).
    await using a = await startTestAppliance(dir.path, {
      ingest: { hep_stream: { enable: true, max_subscribers_per_address: 32 } },
    });
    const base = `${a.app.nodeUrl!.replace(/^http/, "ws")}/stream`;
    const subs = Array.from({ length: 32 }, () => connectStream(base));
    await Promise.all(subs.map((s) => s.opened));
    await waitFor("32 subscribers", () => series(a.app.metrics.render(), "svc_stream_subscribers") === 32);
    const extra = connectStream(base);
    const end = await extra.closed;
    expect(end.code).toBe(1013);
    expect(end.reason).toMatch(/32 subscribers, its limit \(ingest\.hep_stream\.max_subscribers\)/);
    expect(series(a.app.metrics.render(), "svc_stream_subscribers_refused_total", 'reason="max_subscribers"')).toBe(1);
    subs[0]!.close();
    await waitFor("a slot to be free", () => series(a.app.metrics.render(), "svc_stream_subscribers") === 31);
    using again = connectStream(base);
    await again.opened;
    await waitFor("the new subscriber", () => series(a.app.metrics.render(), "svc_stream_subscribers") === 32);
    for (const s of subs) s.close();
  }, 60_000);

  test("ingest.hep.threads = 0 and HEP over HTTP: the same stream from the main thread's pipeline", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      ingest: { hep: { threads: 0 }, hep_stream: { enable: true } },
    });
    const base = `${a.app.nodeUrl!.replace(/^http/, "ws")}/stream`;
    const udp = await udpSender(a.app.ingest!.listeners.udp!.port());
    using sentinel = await captureOn(base, udp.send);
    using sip = connectStream(`${base}?proto=1`);
    await sip.opened;
    udp.send([hep({ srcPort: 6101, payload: invite({ ...call, callId: "over-udp" }) })]);
    const posted = await fetch(`${a.app.nodeUrl}/api/v1/hep`, {
      method: "POST",
      body: Buffer.from(hep({ srcPort: 6102, payload: invite({ ...call, callId: "over-http" }) })),
    });
    expect(posted.status).toBe(202);
    await waitFor("both events", () => sip.frames.length === 2);
    expect(sip.frames.map((f) => [f.src_port, f.sip?.callid]).sort()).toEqual([
      [6101, "over-udp"],
      [6102, "over-http"],
    ]);
    expect(sentinel.frames.length).toBeGreaterThan(0);
    udp.close();
  }, 60_000);

  test("/stream is not served while ingest.hep_stream.enable is off", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path);
    const r = await rawHandshake(`${a.app.nodeUrl}/stream?proto=1`);
    expect(r.status).toBe(404);
  }, 60_000);
});
