/**
 * POST /imports/pcap over the real appliance: captures we build (writePcap; a pcapng by hand with
 * IPv6 UDP and IPv4 TCP), and the public corpus when present. After the 201 every message is
 * found by the search API (compared with extractSipMessages and, for the corpus, tshark's
 * *.sip.tsv ground truth), and exporting it again gives tshark the same messages at the same
 * microsecond times. override_to_current_time and force_sip_table, and the 400s for bad input.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  ETHERTYPE,
  LINKTYPE,
  extractSipMessages,
  writePcap,
  type CapturedSip,
  type PcapRecord,
} from "../../src/pcap/index.ts";
import { PcapngBuilder, ethernet, ipv4, ipv6, tcp, udp } from "../../src/pcap/testing.ts";
import { register, invite, request, response } from "../fixtures/sip.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { epochTextToUs, eventOf, startWithApi, tsharkSip, type Api } from "./export-helpers.ts";
import { corpusPath } from "../corpus.ts";

const NOW_MS = Date.now();
const enc = new TextEncoder();
const dec = new TextDecoder();
const CORPUS = process.env.SVC_PCAP_CORPUS ?? corpusPath("pcaps");

type Table = "call" | "registration" | "default";
const TABLES: Table[] = ["call", "registration", "default"];

/** A call over IPv4, a registration over IPv6 and an OPTIONS ping (default table); odd µs steps. */
function capture(tag: string, baseUs: number): { records: PcapRecord[]; ids: Record<Table, string> } {
  const ids = { call: `imp-call-${tag}`, registration: `imp-reg-${tag}`, default: `imp-opt-${tag}` };
  const c = { callId: ids.call, from: "3001", to: "4002", fromTag: "f1" };
  const v4 = (payload: string, fwd: boolean) => ({
    srcIp: fwd ? "192.0.2.10" : "192.0.2.20",
    dstIp: fwd ? "192.0.2.20" : "192.0.2.10",
    srcPort: fwd ? 5062 : 5060,
    dstPort: fwd ? 5060 : 5062,
    payload,
  });
  const v6 = (payload: string, fwd: boolean) => ({
    srcIp: fwd ? "2001:db8:5::9" : "2001:db8:5::1",
    dstIp: fwd ? "2001:db8:5::1" : "2001:db8:5::9",
    srcPort: 5060,
    dstPort: 5060,
    payload,
  });
  const msgs = [
    v4(invite({ ...c, srcIp: "192.0.2.10" }), true),
    v4(response(100, "Trying", "INVITE", c), false),
    v6(register({ callId: ids.registration, user: "alice", cseq: 1 }), true),
    v6(
      response(401, "Unauthorized", "REGISTER", {
        callId: ids.registration,
        from: "alice",
        to: "alice",
        fromTag: "reg-1",
        cseq: 1,
      }),
      false,
    ),
    v4(response(200, "OK", "INVITE", { ...c, toTag: "t1" }), false),
    v6(register({ callId: ids.registration, user: "alice", cseq: 2 }), true),
    v6(
      response(200, "OK", "REGISTER", {
        callId: ids.registration,
        from: "alice",
        to: "alice",
        fromTag: "reg-1",
        cseq: 2,
      }),
      false,
    ),
    v4(request("ACK", { ...c, toTag: "t1", cseq: 1 }), true),
    v4(request("OPTIONS", { callId: ids.default, from: "mon", to: "pbx", cseq: 7 }), true),
    v4(response(200, "OK", "OPTIONS", { callId: ids.default, from: "mon", to: "pbx", cseq: 7 }), false),
    v4(request("BYE", { ...c, toTag: "t1", cseq: 2 }), true),
    v4(response(200, "OK", "BYE", { ...c, toTag: "t1", cseq: 2 }), false),
  ];
  return {
    records: msgs.map((m, i) => ({ ...m, timestampUs: baseUs + i * 12_345 + 7, payload: enc.encode(m.payload) })),
    ids,
  };
}

async function importFile(api: Api, bytes: Uint8Array, name: string, fields: Record<string, string> = {}) {
  const form = new FormData();
  form.append("file", new File([bytes.slice()], name));
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return await api.call("POST", "/imports/pcap", form);
}

interface Report {
  file: { name: string; bytes: number; format: string; frames: number };
  sip_messages: number;
  imported: number;
  tables: Record<string, number>;
  skipped: Record<string, number>;
  first_timestamp_us: number;
  last_timestamp_us: number;
  first_timestamp: string;
  time_shift_us: number;
  forced_table: string | null;
  truncated: { reason: string } | null;
  warnings: string[];
}

/** What we compare: time, Call-ID, method or status, addresses and ports, payload. */
const capturedKey = (m: CapturedSip, shiftUs = 0) => {
  const text = dec.decode(m.payload);
  const first = text.split("\r\n", 1)[0] ?? "";
  const status = /^SIP\/2\.0 (\d{3})/.exec(first)?.[1];
  const callId = /^Call-ID:\s*(.*)$/im.exec(text)?.[1]?.trim() ?? "";
  return `${m.timestampUs + shiftUs} ${callId} ${status ?? first.split(" ")[0]} ${m.srcIp}:${m.srcPort}>${m.dstIp}:${m.dstPort}`;
};
const rowKey = (r: Record<string, unknown>) =>
  `${r.timestamp_us} ${r.session_id} ${r.event} ${r.src_ip}:${r.src_port}>${r.dst_ip}:${r.dst_port}`;

/** Every stored row of these Call-IDs, per SIP table, through POST /transactions/search. */
async function searchRows(
  api: Api,
  callIds: string[],
  fromUs: number,
  toUs: number,
): Promise<Record<Table, Array<Record<string, unknown>>>> {
  const out = { call: [], registration: [], default: [] } as Record<Table, Array<Record<string, unknown>>>;
  for (const t of TABLES) {
    const r = await api.call("POST", "/transactions/search", {
      filter: { proto_type: 1, event_type: t, call_id: callIds.join(";") },
      param: { limit: 50_000 },
      timestamp: { from: Math.floor(fromUs / 1000) - 1000, to: Math.ceil(toUs / 1000) + 1000 },
    });
    expect(r.status).toBe(200);
    out[t] = r.json!.data!.items!;
  }
  return out;
}

/** Exports the call view (call + default tables) and the registration view; tshark's rows of both. */
async function exportBack(
  api: Api,
  dir: string,
  rows: Record<Table, Array<Record<string, unknown>>>,
  fromUs: number,
  toUs: number,
  name: string,
) {
  const timestamp = { from: Math.floor(fromUs / 1000) - 1000, to: Math.ceil(toUs / 1000) + 1000 };
  const frames = [];
  for (const [eventType, tables] of [
    ["call", ["call", "default"]],
    ["registration", ["registration"]],
  ] as const) {
    const ids = [...new Set(tables.flatMap((t) => rows[t].map((r) => String(r.session_id))))];
    if (ids.length === 0) continue;
    const r = await api.call("POST", "/transactions/export/pcap", {
      session_id: ids,
      event_type: eventType,
      timestamp,
      use_default_exclusions: false,
    });
    expect(r.status).toBe(200);
    const path = join(dir, `${name}-${eventType}.pcap`);
    await Bun.write(path, r.bytes);
    frames.push(...tsharkSip(path));
  }
  return frames;
}

const sorted = (xs: string[]) => [...xs].sort();

describe("PCAP import", () => {
  peerTest(
    "pcap and pcapng we build: every message searchable with its time, addresses and payload; exported again tshark sees the same",
    [PEERS.tshark],
    async () => {
      await using dir = tempDir();
      await using s = await startWithApi(dir.path);
      const { api } = s;
      const baseUs = (NOW_MS - 1_800_000) * 1000;
      const { records, ids } = capture(crypto.randomUUID(), baseUs);
      const file = writePcap(records);

      const r = await importFile(api, file, "call.pcap");
      expect(r.status).toBe(201);
      const rep = r.json!.data as unknown as Report;
      expect(rep).toMatchObject({
        file: { name: "call.pcap", bytes: file.length, format: "pcap", frames: 12 },
        sip_messages: 12,
        imported: 12,
        tables: { hep_proto_1_call: 6, hep_proto_1_registration: 4, hep_proto_1_default: 2 },
        skipped: {},
        first_timestamp_us: records[0]!.timestampUs,
        last_timestamp_us: records.at(-1)!.timestampUs,
        time_shift_us: 0,
        forced_table: null,
        truncated: null,
        warnings: [],
      });

      const want = extractSipMessages(file).messages;
      const rows = await searchRows(api, Object.values(ids), baseUs, records.at(-1)!.timestampUs);
      const all = TABLES.flatMap((t) => rows[t]);
      expect(sorted(all.map(rowKey))).toEqual(sorted(want.map((m) => capturedKey(m))));
      expect(rows.registration.map((x) => x.session_id)).toEqual([
        ids.registration,
        ids.registration,
        ids.registration,
        ids.registration,
      ]);
      for (const m of want) {
        const row = all.find((x) => x.timestamp_us === m.timestampUs)!;
        expect(row.payload).toBe(dec.decode(m.payload));
        expect(row).toMatchObject({ protocol: "UDP", node_id: 0 });
        expect((row.data_extra as Record<string, unknown>).node_name).toBe("pcap-import");
      }

      const frames = await exportBack(api, dir.path, rows, baseUs, records.at(-1)!.timestampUs, "built");
      expect(frames.filter((f) => f.expert !== "")).toEqual([]);
      expect(sorted(frames.map((f) => `${f.timeUs} ${f.callId} ${eventOf(f)} ${f.src}:${f.srcPort}`))).toEqual(
        sorted(want.map((m) => capturedKey(m).split(">")[0]!)),
      );

      // pcapng by hand: nanosecond interface, IPv6 UDP, and two SIP messages in one IPv4 TCP segment.
      const T = (NOW_MS - 600_000) * 1000;
      const ng = `ng-${crypto.randomUUID()}`;
      const inv = enc.encode(invite({ callId: ng, from: "5001", to: "6002", srcIp: "2001:db8:6::1" }));
      const ok = enc.encode(response(200, "OK", "INVITE", { callId: ng, from: "5001", to: "6002", toTag: "x" }));
      const m1 = request("MESSAGE", { callId: `${ng}-tcp`, from: "5001", to: "6002", cseq: 1 });
      const m2 = request("MESSAGE", { callId: `${ng}-tcp`, from: "5001", to: "6002", cseq: 2 });
      const seg = enc.encode(m1 + m2);
      const v6 = (src: string, dst: string, p: Uint8Array) =>
        ethernet(ETHERTYPE.IPV6, ipv6({ src, dst, nextHeader: 17 }, udp(src, dst, 5060, 5060, p)));
      const v4tcp = (syn: boolean, seq: number, p?: Uint8Array) =>
        ethernet(
          ETHERTYPE.IPV4,
          ipv4(
            { src: "198.51.100.1", dst: "198.51.100.2", protocol: 6 },
            tcp({ srcPort: 40123, dstPort: 5060, seq, syn }, p),
          ),
        );
      const pcapng = new PcapngBuilder()
        .interface(LINKTYPE.ETHERNET, { tsresol: 9 })
        .packet(0, BigInt(T) * 1000n + 999n, v6("2001:db8:6::1", "2001:db8:6::2", inv))
        .packet(0, BigInt(T + 20_001) * 1000n, v6("2001:db8:6::2", "2001:db8:6::1", ok))
        .packet(0, BigInt(T + 30_000) * 1000n, v4tcp(true, 1000))
        .packet(0, BigInt(T + 40_003) * 1000n, v4tcp(false, 1001, seg))
        .bytes();
      const ngr = await importFile(api, pcapng, "hand.pcapng", { override_to_current_time: "off" });
      expect(ngr.status).toBe(201);
      expect(ngr.json!.data).toMatchObject({
        file: { format: "pcapng", frames: 4 },
        sip_messages: 4,
        imported: 4,
        transports: { udp: 2, tcp: 2 },
      });
      const ngWant = extractSipMessages(pcapng).messages;
      expect(ngWant.map((m) => m.timestampUs)).toEqual([T, T + 20_001, T + 40_003, T + 40_003]);
      const ngRows = await searchRows(api, [ng, `${ng}-tcp`], T, T + 40_003);
      expect(sorted(TABLES.flatMap((t) => ngRows[t]).map(rowKey))).toEqual(sorted(ngWant.map((m) => capturedKey(m))));
      expect(
        TABLES.flatMap((t) => ngRows[t])
          .map((x) => `${x.session_id} ${x.protocol}`)
          .sort(),
      ).toEqual([`${ng} UDP`, `${ng} UDP`, `${ng}-tcp TCP`, `${ng}-tcp TCP`]);
      const ngFrames = await exportBack(api, dir.path, ngRows, T, T + 40_003, "pcapng");
      expect(ngFrames.filter((f) => f.expert !== "")).toEqual([]);
      expect(sorted(ngFrames.map((f) => `${f.timeUs} ${f.callId} ${eventOf(f)}`))).toEqual(
        sorted(ngWant.map((m) => capturedKey(m).split(" ").slice(0, 3).join(" "))),
      );
    },
    60_000,
  );

  test("override_to_current_time moves the first SIP frame to now and keeps the deltas; force_sip_table routes everything into one table", async () => {
    await using dir = tempDir();
    await using s = await startWithApi(dir.path);
    const { api } = s;
    const { lake } = s.a.app;
    const old = capture(crypto.randomUUID(), Date.UTC(2015, 5, 1) * 1000);
    const before = Date.now() * 1000;
    const r = await importFile(api, writePcap(old.records), "old.pcap", { override_to_current_time: "ON" });
    const after = Date.now() * 1000;
    expect(r.status).toBe(201);
    const rep = r.json!.data as unknown as Report;
    expect(rep.first_timestamp_us).toBeGreaterThanOrEqual(before);
    expect(rep.first_timestamp_us).toBeLessThanOrEqual(after);
    expect(rep.time_shift_us).toBe(rep.first_timestamp_us - old.records[0]!.timestampUs);
    const stored = await lake!.query(
      `SELECT epoch_us("timestamp") AS us FROM svc_lake.main.hep_proto_1_call WHERE session_id = $1 UNION ALL ` +
        `SELECT epoch_us("timestamp") FROM svc_lake.main.hep_proto_1_registration WHERE session_id = $2 UNION ALL ` +
        `SELECT epoch_us("timestamp") FROM svc_lake.main.hep_proto_1_default WHERE session_id = $3 ORDER BY 1`,
      [old.ids.call, old.ids.registration, old.ids.default],
    );
    const t0 = Number(stored.rows[0]!.us);
    expect(t0).toBe(rep.first_timestamp_us);
    expect(stored.rows.map((x) => Number(x.us) - t0)).toEqual(
      old.records.map((x) => x.timestampUs - old.records[0]!.timestampUs),
    );

    // Without the override an old capture keeps its times, and the report warns about retention.
    const kept = capture(crypto.randomUUID(), Date.UTC(2015, 5, 1) * 1000);
    const k = await importFile(api, writePcap(kept.records), "kept.pcap", { override_to_current_time: "0" });
    expect((k.json!.data as unknown as Report).first_timestamp_us).toBe(kept.records[0]!.timestampUs);
    expect((k.json!.data as unknown as Report).warnings.join(" ")).toContain("retention");

    for (const [field, value, table] of [
      ["force_table", "reg", "registration"],
      ["force_sip_table", "hep_proto_1_call", "call"],
      ["force_sip_table", "Default", "default"],
    ] as const) {
      const c = capture(crypto.randomUUID(), (NOW_MS - 300_000) * 1000);
      const f = await importFile(api, writePcap(c.records), "forced.pcap", { [field]: value });
      expect(f.status).toBe(201);
      expect(f.json!.data).toMatchObject({
        imported: 12,
        tables: { [`hep_proto_1_${table}`]: 12 },
        forced_table: table,
      });
      const ids = Object.values(c.ids);
      const n = await lake!.query(
        `SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_${table} WHERE session_id IN ($1, $2, $3)`,
        ids,
      );
      expect(Number(n.rows[0]!.n)).toBe(12);
    }
  }, 60_000);

  test("bad uploads are 400 with a message that says why; a capture cut short imports what it holds", async () => {
    await using dir = tempDir();
    await using s = await startWithApi(dir.path);
    const { api } = s;
    const good = writePcap(capture(crypto.randomUUID(), (NOW_MS - 60_000) * 1000).records);
    const expect400 = async (
      res: Promise<{ status: number; json: { error?: string; message?: string } | undefined }>,
      pattern: RegExp,
    ) => {
      const r = await res;
      expect(r.status).toBe(400);
      expect(r.json?.message ?? "").toMatch(pattern);
    };
    await expect400(importFile(api, enc.encode("this is not a capture at all"), "notes.txt"), /not a pcap or pcapng/);
    await expect400(importFile(api, new Uint8Array(0), "empty.pcap"), /not a pcap/);
    await expect400(
      importFile(
        api,
        writePcap([{ timestampUs: 1, srcIp: "10.0.0.1", dstIp: "10.0.0.2", payload: Uint8Array.of(0x80, 0, 1, 2) }]),
        "rtp.pcap",
      ),
      /no SIP messages/,
    );
    await expect400(importFile(api, good, "x.pcap", { override_to_current_time: "maybe" }), /override_to_current_time/);
    await expect400(importFile(api, good, "x.pcap", { force_sip_table: "calls" }), /force_sip_table/);
    await expect400(importFile(api, good, "x.pcap", { force_sip_table: "call", force_table: "default" }), /conflicts/);
    await expect400(api.call("POST", "/imports/pcap", { file: "abc" }), /multipart\/form-data/);
    await expect400(api.call("POST", "/imports/pcap", new FormData()), /file: required/);
    expect((await api.call("POST", "/imports/pcap", new FormData(), { token: null })).status).toBe(401);

    const cut = await importFile(api, good.subarray(0, good.length - 40), "cut.pcap");
    expect(cut.status).toBe(201);
    expect(cut.json!.data).toMatchObject({ imported: 11, truncated: { reason: "truncated_record" } });
  }, 60_000);
});

/** `good` with `n` empty records (16-byte headers, nothing captured) inserted after its file header. */
function withEmptyRecords(good: Uint8Array, n: number): Uint8Array {
  const out = new Uint8Array(good.length + 16 * n);
  out.set(good.subarray(0, 24));
  const dv = new DataView(out.buffer);
  for (let i = 0; i < n; i++) dv.setUint32(24 + 16 * i, 1_700_000_000, true);
  out.set(good.subarray(24), 24 + 16 * n);
  return out;
}

describe("PCAP import: a capture of millions of empty records", () => {
  const EMPTY = 1_500_000;
  const SIP = 12;
  test("is parsed in slices while other requests are answered, every record counted exactly; one record over coordinator.imports.max_records is a 413 before parsing", async () => {
    await using dir = tempDir();
    await using s = await startWithApi(dir.path, { coordinator: { imports: { max_records: EMPTY + SIP } } });
    const { api } = s;
    const metricsUrl = `${s.a.app.coordinatorUrl}/metrics`;
    const framesParsed = async () =>
      Number(/^svc_pcap_import_frames_total (\d+)$/m.exec(await (await fetch(metricsUrl)).text())?.[1] ?? 0);
    const { records, ids } = capture(crypto.randomUUID(), (NOW_MS - 600_000) * 1000);
    const file = withEmptyRecords(writePcap(records), EMPTY);

    const before = await framesParsed();
    let settled = false;
    const pending = importFile(api, file, "empty-records.pcap").finally(() => {
      settled = true;
    });
    // Other requests are answered while the import runs: /metrics, asked in a loop, must show the
    // parse part-way at least once (a parse in one piece would only ever show before or after).
    const seen: number[] = [];
    while (!settled) seen.push(await framesParsed());
    const r = await pending;
    expect(r.status).toBe(201);
    expect(seen.filter((v) => v > before && v < before + EMPTY + SIP).length).toBeGreaterThan(0);
    expect(await framesParsed()).toBe(before + EMPTY + SIP);
    expect(r.json!.data).toMatchObject({
      file: { name: "empty-records.pcap", bytes: file.length, format: "pcap", frames: EMPTY + SIP },
      sip_messages: SIP,
      imported: SIP,
      tables: { hep_proto_1_call: 6, hep_proto_1_registration: 4, hep_proto_1_default: 2 },
      skipped: { link_truncated: EMPTY },
      truncated: null,
    });
    const stored = await searchRows(api, Object.values(ids), records[0]!.timestampUs, records.at(-1)!.timestampUs);
    expect(TABLES.map((t) => stored[t].length)).toEqual([6, 4, 2]);

    // One record more than the cap: refused before anything is parsed or stored.
    const over = await importFile(api, withEmptyRecords(writePcap(records), EMPTY + 1), "over.pcap");
    expect(over.status).toBe(413);
    expect(over.json).toMatchObject({
      error: "PAYLOAD_TOO_LARGE",
      reason: "max_records",
      records: EMPTY + SIP + 1,
      max_records: EMPTY + SIP,
    });
    expect(over.json!.message).toContain(`coordinator.imports.max_records (${EMPTY + SIP})`);
    expect(await framesParsed()).toBe(before + EMPTY + SIP);
    // The uploads were spooled beside the catalog and are gone again.
    expect(readdirSync(join(dir.path, "import-spool"))).toEqual([]);
  }, 120_000);
});

describe("PCAP import: concurrency", () => {
  test("an upload in progress holds one of coordinator.imports.max_concurrent; one more import is a 429 until it ends", async () => {
    await using dir = tempDir();
    await using s = await startWithApi(dir.path, { coordinator: { imports: { max_concurrent: 1 } } });
    const { api } = s;
    const good = writePcap(capture(crypto.randomUUID(), (NOW_MS - 60_000) * 1000).records);
    // An upload that stops half-way: headers and the start of the file part, then nothing.
    const url = new URL(s.a.app.coordinatorUrl!);
    const head =
      `POST /api/v4/imports/pcap HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${api.token}\r\n` +
      "Content-Type: multipart/form-data; boundary=slow\r\nContent-Length: 1000000\r\n\r\n" +
      '--slow\r\nContent-Disposition: form-data; name="file"; filename="slow.pcap"\r\n\r\n';
    const slow = await Bun.connect({ hostname: url.hostname, port: Number(url.port), socket: { data() {} } });
    slow.write(enc.encode(head));
    slow.write(good.subarray(0, 100));
    const refused = await waitFor("a second import refused while the first upload is open", async () => {
      const r = await importFile(api, good, "second.pcap");
      return r.status === 429 ? r : undefined;
    });
    expect(refused.json).toMatchObject({ error: "RATE_LIMITED" });
    expect(refused.json!.message).toContain("coordinator.imports.max_concurrent");
    // The client goes away: its slot is given back.
    slow.end();
    const after = await waitFor("an import accepted once the upload is gone", async () => {
      const r = await importFile(api, good, "third.pcap");
      return r.status === 201 ? r : undefined;
    });
    expect(after.json!.data).toMatchObject({ imported: 12 });
  }, 60_000);
});

/** The corpus: tshark's ground truth per frame (several SIP PDUs of a TCP frame are joined with ","). */
function groundTruth(tsv: string) {
  const [header = "", ...lines] = readFileSync(tsv, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
  const cols = header.split("\t");
  const out = {
    callIds: [] as string[],
    events: [] as string[],
    fromUsers: [] as string[],
    toUsers: [] as string[],
    times: [] as number[],
  };
  for (const line of lines) {
    const cells = line.split("\t");
    const get = (c: string) => cells[cols.indexOf(c)] ?? "";
    const list = (c: string) => (get(c) === "" ? [] : get(c).split(","));
    out.callIds.push(...list("sip.Call-ID"));
    out.events.push(...list("sip.Method"), ...list("sip.Status-Code"));
    out.fromUsers.push(...list("sip.from.user"));
    out.toUsers.push(...list("sip.to.user"));
    out.times.push(epochTextToUs(get("frame.time_epoch")));
  }
  return out;
}

const corpusFiles = existsSync(CORPUS)
  ? readdirSync(CORPUS).filter((f) => f.endsWith(".pcap") && existsSync(join(CORPUS, f.replace(/\.pcap$/, ".sip.tsv"))))
  : [];
if (corpusFiles.length === 0)
  console.warn(`skip: PCAP import corpus round trip needs ${CORPUS} (third-party captures, not in the repo)`);

describe("PCAP import: public corpus", () => {
  for (const name of corpusFiles) {
    peerTest(
      `${name}: every SIP message imported and searchable (tshark ground truth), exported again unchanged`,
      [PEERS.tshark],
      async () => {
        await using dir = tempDir();
        // Old captures: no retention pass may delete them while the test runs.
        await using s = await startWithApi(dir.path, { storage: { lakehouse: { retention: { days: 0 } } } });
        const { api } = s;
        const bytes = new Uint8Array(readFileSync(join(CORPUS, name)));
        const truth = groundTruth(join(CORPUS, name.replace(/\.pcap$/, ".sip.tsv")));
        const want = extractSipMessages(bytes).messages;
        expect(want.length).toBe(truth.callIds.length);

        const r = await importFile(api, bytes, name);
        expect(r.status).toBe(201);
        const rep = r.json!.data as unknown as Report;
        expect(rep.sip_messages).toBe(want.length);
        expect(rep.imported).toBe(want.length);

        const minUs = Math.min(...want.map((m) => m.timestampUs));
        const maxUs = Math.max(...want.map((m) => m.timestampUs));
        const rows = await searchRows(api, [...new Set(truth.callIds)], minUs, maxUs);
        const all = TABLES.flatMap((t) => rows[t]);
        expect(sorted(all.map((x) => String(x.session_id)))).toEqual(sorted(truth.callIds));
        expect(sorted(all.map((x) => String(x.event)))).toEqual(sorted(truth.events));
        expect(sorted(all.map((x) => String(x.caller ?? "")).filter((u) => u !== ""))).toEqual(sorted(truth.fromUsers));
        expect(sorted(all.map((x) => String(x.callee ?? "")).filter((u) => u !== ""))).toEqual(sorted(truth.toUsers));
        expect(sorted(all.map(rowKey))).toEqual(sorted(want.map((m) => capturedKey(m))));

        const frames = await exportBack(api, dir.path, rows, minUs, maxUs, name);
        // Nothing malformed; any other expert note must be tshark's opinion of the original too
        // (the corpus has headers tshark does not know and an ISUP body it calls stray characters).
        const experts = (fs: Array<{ expert: string }>) =>
          fs.flatMap((f) => f.expert.split(",")).filter((e) => e !== "");
        const original = new Set(experts(tsharkSip(join(CORPUS, name))));
        expect(experts(frames).filter((e) => /malformed/i.test(e) || !original.has(e))).toEqual([]);
        expect(sorted(frames.map((f) => `${f.timeUs} ${f.callId} ${eventOf(f)} ${f.src}:${f.srcPort}`))).toEqual(
          sorted(want.map((m) => capturedKey(m).split(">")[0]!)),
        );
      },
      120_000,
    );
  }
});
