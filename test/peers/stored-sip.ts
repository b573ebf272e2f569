/**
 * Stored SIP rows vs tshark's view of the wire: pairs every message tshark saw with the row the
 * appliance stored for it and lists, in words, whatever is missing, extra or different. The tests
 * assert those lists are empty, so a failure names the message and the field.
 */
import { waitFor } from "../harness.ts";
import type { WireSip } from "./tshark-sip.ts";

export type SipTable = "call" | "registration" | "default";

export interface StoredSip {
  table: SipTable;
  tsUs: number;
  /** The `date` partition column, "YYYY-MM-DD". */
  date: string;
  sessionId: string | null;
  caller: string | null;
  callee: string | null;
  srcIp: string;
  dstIp: string;
  srcPort: number;
  dstPort: number;
  event: string;
  method: string | null;
  responseCode: number | null;
  cseqMethod: string | null;
  protoType: number;
  protocol: string;
  nodeId: number | null;
  cid: string | null;
  payload: string;
  extra: Record<string, unknown>;
  /** hep_proto_1_registration only. */
  registration?: { aor: string | null; contact: string | null; expires: number | null; userAgent: string | null };
}

/** The part of the lake the comparison needs (structural, so the test passes `a.app.lake!`). */
export interface LakeReader {
  sync(): Promise<void>;
  query(sql: string): Promise<{ rows: Record<string, unknown>[] }>;
}

const TABLES: SipTable[] = ["call", "registration", "default"];

/** Every row of the three SIP tables (spec: hep_proto_1_call / _registration / _default). */
export async function storedSip(lake: LakeReader): Promise<StoredSip[]> {
  await lake.sync();
  const out: StoredSip[] = [];
  for (const table of TABLES) {
    const registration = table === "registration" ? ", aor, contact, expires, user_agent" : "";
    const r = await lake.query(
      `SELECT epoch_us(timestamp) AS ts_us, CAST(date AS VARCHAR) AS date, session_id, caller, callee, src_ip, dst_ip, src_port, dst_port, event, method, response_code,
              cseq_method, proto_type, protocol, node_id, cid, payload, data_extra${registration} FROM svc_lake.main.hep_proto_1_${table} ORDER BY timestamp`,
    );
    for (const row of r.rows) {
      const str = (k: string) => (row[k] === null || row[k] === undefined ? null : String(row[k]));
      const num = (k: string) => (row[k] === null || row[k] === undefined ? null : Number(row[k]));
      out.push({
        table,
        tsUs: Number(row.ts_us),
        date: String(row.date),
        sessionId: str("session_id"),
        caller: str("caller"),
        callee: str("callee"),
        srcIp: String(row.src_ip),
        dstIp: String(row.dst_ip),
        srcPort: Number(row.src_port),
        dstPort: Number(row.dst_port),
        event: String(row.event),
        method: str("method"),
        responseCode: num("response_code"),
        cseqMethod: str("cseq_method"),
        protoType: Number(row.proto_type),
        protocol: String(row.protocol),
        nodeId: num("node_id"),
        cid: str("cid"),
        payload: String(row.payload),
        extra: JSON.parse(String(row.data_extra ?? "{}")) as Record<string, unknown>,
        ...(registration
          ? {
              registration: {
                aor: str("aor"),
                contact: str("contact"),
                expires: num("expires"),
                userAgent: str("user_agent"),
              },
            }
          : {}),
      });
    }
  }
  return out.sort((a, b) => a.tsUs - b.tsUs);
}

/**
 * The rows once at least `count` are visible, or whatever is there after `timeoutMs`: a lost
 * message must show up as a named difference in the comparison, not as a timeout.
 */
export async function settleStored(lake: LakeReader, count: number, timeoutMs: number): Promise<StoredSip[]> {
  let rows: StoredSip[] = [];
  try {
    await waitFor(
      `${count} stored SIP rows`,
      async () => (rows = await storedSip(lake)).length >= count,
      timeoutMs,
      100,
    );
  } catch {
    // Fewer rows than messages: the comparison names the missing ones.
  }
  return rows;
}

/** The table a SIP message belongs in, by CSeq method (docs/API.md "Protocol types"). */
export function expectedTable(cseqMethod: string | undefined): SipTable {
  const m = (cseqMethod ?? "").toUpperCase();
  if (["INVITE", "ACK", "PRACK", "UPDATE", "BYE", "CANCEL", "INFO"].includes(m)) return "call";
  if (m === "REGISTER") return "registration";
  return "default";
}

const wireKey = (w: WireSip) =>
  `${w.callId} | ${w.cseqSeq ?? "?"} ${w.cseqMethod ?? "?"} | ${w.method ?? w.statusCode} | ${w.srcIp}:${w.srcPort} > ${w.dstIp}:${w.dstPort}`;
const storedKey = (s: StoredSip) =>
  `${s.sessionId} | ${String(s.extra.cseq ?? "?")} ${s.cseqMethod ?? "?"} | ${s.event} | ${s.srcIp}:${s.srcPort} > ${s.dstIp}:${s.dstPort}`;

export interface CompareOptions {
  /** The capture id the agent put on the wire. */
  nodeId: number | ((w: WireSip) => number);
  /** Largest allowed |HEP time − frame time|, µs (0: exact). */
  toleranceUs: number;
  /** `protocol` column expected for a wire message. */
  protocol: (w: WireSip) => string;
  /** Compare the stored payload with the UDP payload byte for byte. */
  comparePayload: boolean;
  /**
   * Frame times after `afterUs` are outside the appliance's accepted window (beyond now +
   * max_clock_skew_sec): those rows must be shifted (docs/ARCHITECTURE.md "Agent clocks outside the
   * accepted window"): data_extra.ts_fallback, time_source "shifted", and the stored time is the
   * frame time + data_extra.time_shifted_us, the first of them inside `windowUs` (the arrival).
   */
  fallback?: { afterUs: number; windowUs: [number, number] };
}

export interface Comparison {
  expected: number;
  stored: number;
  matched: number;
  /** Wire messages without a row: "frame 12 <key>". */
  missing: string[];
  /** Rows without a wire message. */
  unexpected: string[];
  /** "frame 12 <field>: stored X, tshark Y". */
  mismatches: string[];
  maxTsDiffUs: number;
  /** Messages whose payload was compared byte for byte. */
  payloadsCompared: number;
  /** Rows of hep_proto_1_registration whose aor / contact / expires / user_agent were compared. */
  registrationsCompared: number;
  /** Messages whose implausible frame time was expected (and checked) to become the receive time. */
  receiveTimeFallbacks: number;
  missingWire: WireSip[];
}

const payloadHex = (s: StoredSip) =>
  (s.extra.payload_encoding === "base64" ? Buffer.from(s.payload, "base64") : Buffer.from(s.payload, "utf8")).toString(
    "hex",
  );

export function compareWithWire(wire: WireSip[], stored: StoredSip[], o: CompareOptions): Comparison {
  const byKey = new Map<string, StoredSip[]>();
  for (const s of stored) byKey.set(storedKey(s), [...(byKey.get(storedKey(s)) ?? []), s]);
  const c: Comparison = {
    expected: wire.length,
    stored: stored.length,
    matched: 0,
    missing: [],
    unexpected: [],
    mismatches: [],
    maxTsDiffUs: 0,
    payloadsCompared: 0,
    registrationsCompared: 0,
    receiveTimeFallbacks: 0,
    missingWire: [],
  };
  for (const w of [...wire].sort((a, b) => a.timestampUs - b.timestampUs)) {
    const key = wireKey(w);
    const s = byKey.get(key)?.shift();
    if (!s) {
      c.missing.push(`frame ${w.frame} ${key}`);
      c.missingWire.push(w);
      continue;
    }
    c.matched++;
    const isRequest = w.method !== undefined;
    const checks: [string, unknown, unknown][] = [
      ["table", s.table, expectedTable(w.cseqMethod)],
      ["caller", s.caller, w.fromUser ?? null],
      ["callee", s.callee, w.toUser ?? null],
      ["method", s.method, isRequest ? w.method : null],
      ["response_code", s.responseCode, isRequest ? null : (w.statusCode ?? null)],
      ["cseq_method", s.cseqMethod, w.cseqMethod ?? null],
      ["data_extra.from_tag", s.extra.from_tag ?? null, w.fromTag ?? null],
      ["data_extra.to_tag", s.extra.to_tag ?? null, w.toTag ?? null],
      ["data_extra.user_agent", s.extra.user_agent ?? null, w.userAgent ?? null],
      ["data_extra.request_uri", s.extra.request_uri ?? null, isRequest ? (w.requestUri ?? null) : null],
      ["proto_type", s.protoType, 1],
      ["date", s.date, new Date(Math.floor(s.tsUs / 1000)).toISOString().slice(0, 10)],
      ["protocol", s.protocol, o.protocol(w)],
      ["node_id", s.nodeId, typeof o.nodeId === "function" ? o.nodeId(w) : o.nodeId],
    ];
    if (s.registration) {
      // Registration columns: AOR = To URI, first Contact URI, its expires parameter else Expires.
      checks.push(
        ["aor", s.registration.aor, w.toUri ?? null],
        ["contact", s.registration.contact, w.contactUri ?? null],
        ["expires", s.registration.expires, w.contactExpires ?? w.expiresHeader ?? null],
        ["user_agent", s.registration.userAgent, w.userAgent ?? null],
      );
      c.registrationsCompared++;
    }
    if (o.fallback && w.timestampUs > o.fallback.afterUs) {
      const [from, to] = o.fallback.windowUs;
      c.receiveTimeFallbacks++;
      checks.push(
        ["data_extra.ts_fallback", s.extra.ts_fallback ?? null, true],
        ["data_extra.time_source", s.extra.time_source ?? null, "shifted"],
      );
      const shift = typeof s.extra.time_shifted_us === "number" ? s.extra.time_shifted_us : Number.NaN;
      if (Math.abs(s.tsUs - (w.timestampUs + shift)) > o.toleranceUs)
        checks.push(["timestamp µs (frame time + time_shifted_us)", s.tsUs, w.timestampUs + shift]);
      // Anchored at an arrival; later ones may run ahead by up to ingest.hep.time_shift.max_ahead_sec.
      if (s.tsUs < from - 300_000_000 || s.tsUs > to + 3_600_000_000)
        checks.push(["timestamp µs (near the arrival)", s.tsUs, `${from}..${to}`]);
    } else {
      // A message reassembled from TCP segments may carry the first segment's time (sngrep does).
      const first = w.firstSegmentUs ?? w.timestampUs;
      const diff = s.tsUs < first ? first - s.tsUs : s.tsUs > w.timestampUs ? s.tsUs - w.timestampUs : 0;
      c.maxTsDiffUs = Math.max(c.maxTsDiffUs, diff);
      if (diff > o.toleranceUs)
        checks.push(["timestamp µs", s.tsUs, first === w.timestampUs ? w.timestampUs : `${first}..${w.timestampUs}`]);
      checks.push(["data_extra.ts_fallback", s.extra.ts_fallback ?? null, null]);
    }
    if (o.comparePayload && w.payloadHex !== undefined) {
      c.payloadsCompared++;
      const ours = payloadHex(s);
      if (ours !== w.payloadHex)
        checks.push([
          "payload",
          `${ours.length / 2} bytes ${Buffer.from(ours, "hex").toString().slice(0, 80)}`,
          `${w.payloadHex.length / 2} bytes`,
        ]);
    }
    for (const [field, got, want] of checks) {
      if (got !== want)
        c.mismatches.push(
          `frame ${w.frame} ${key}: ${field} stored ${JSON.stringify(got)}, tshark ${JSON.stringify(want)}`,
        );
    }
  }
  for (const [key, rest] of byKey)
    for (const s of rest) c.unexpected.push(`${key} at ${s.tsUs} µs in hep_proto_1_${s.table}`);
  return c;
}

/** One line for the log: counts, what was compared, and the largest time difference. */
export function summary(name: string, c: Comparison): string {
  return `${name}: tshark ${c.expected} SIP messages, stored ${c.stored}, matched ${c.matched}, missing ${c.missing.length}, unexpected ${c.unexpected.length}, field mismatches ${c.mismatches.length}, payloads compared ${c.payloadsCompared}, registration rows compared ${c.registrationsCompared}, receive-time fallbacks ${c.receiveTimeFallbacks}, max |HEP time - frame time| ${(c.maxTsDiffUs / 1000).toFixed(3)} ms`;
}
