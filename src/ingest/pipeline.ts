import { decodeHep, hepFrameLength, hepProtoName, HEP_DECODE_REASONS, type HepPacket } from "../hep/index.ts";
import { parseSip, sipTableFor, type SipMessage } from "../sip/index.ts";
import {
  errorMessage,
  fail,
  ok,
  type Counter,
  type Logger,
  type MetricsRegistry,
  type Result,
  type RowWriter,
  type TableDef,
} from "../core/index.ts";
import { AgentTracker } from "./agents.ts";
import { hepTableDef, hepTableName, seededHepTables, type SipTableKind } from "./hep/tables.ts";
import { hepTableKey } from "../core/protocols.ts";

import { writeOtherRow, writeSipRow } from "./hep/rows.ts";
import { SourceClocks, TIME_FALLBACK_REASONS, type ClockedPacket } from "./hep/clock.ts";

/** Where a SIP payload that does not parse is kept, raw. */
const SIP_UNPARSED = hepTableKey(1, "default");

/**
 * Where decoded rows go. main.ts wires it to the lake; ingest never imports the lake (docs/STYLE.md "Layers").
 * `row()` is synchronous and never blocks: undefined means "full", and the packet is counted as
 * dropped with reason `backlog_full`.
 */
export interface Sink {
  defineTable(def: TableDef): Promise<void>;
  /**
   * A row of table `key`; `receivedAtMs` (epoch ms, when the kernel received the packet) is the
   * time of its id where the sink writes one, else the sink's clock.
   */
  row(key: string, receivedAtMs?: number): RowWriter | undefined;
}

/**
 * A stored live packet, for the live stream (called synchronously, must be cheap; unset while
 * nobody subscribes, so the per-packet cost is this one check). Not called for PCAP imports
 * (`ingestDecoded`): old captures are not live events. `p.payload` is valid only during the call
 * (UDP reuses one receive buffer): copy what is kept.
 */
export type PacketTap = (p: HepPacket, sip: SipMessage | undefined) => void;

export interface PipelineOptions {
  customHeaders: readonly string[];
  correlationHeaders: readonly string[];
  authKey: string;
  maxSkewMs: number;
  maxAgeMs: number;
  /** Agent clocks outside the window (ingest.hep.time_shift, docs/ARCHITECTURE.md "Agent clocks outside the accepted window"). */
  timeShift: { enable: boolean; maxAheadMs: number; reanchorGapMs: number; maxSources: number };
  /** The offsets' table shared with other ingest threads (src/ingest/hep/clock-table.ts); else the pipeline's own. */
  clockTable?: SharedArrayBuffer;
}

export type Transport = "udp" | "tcp" | "tls" | "http" | "forward";

/** Where a packet's row went (`main.<table>`), or why it was dropped (counted in svc_hep_packets_dropped_total). */
export type StoreResult = Result<string, "backlog_full" | "internal_error">;

const BACKLOG_FULL: StoreResult = Object.freeze(fail("backlog_full"));

/** Drop reason of a packet without the configured `ingest.hep.auth_key` (chunk 0x000e). */
export const AUTH_FAILED = "auth_failed";

/** What became of the packets of one HEP stream (an HTTP body). */
export interface StreamResult {
  /** Packets taken (stored, or queued for a table being created). */
  accepted: number;
  /** Packets not taken, per drop reason (the labels of svc_hep_packets_dropped_total). */
  rejected: Record<string, number>;
  /** Set when the stream held bytes that are not a HEP3 frame (the rest was not read). */
  unframed?: "truncated_frame" | "bad_frame";
}

export interface PipelineMetrics {
  received: Counter<"transport">;
  bytes: Counter<"transport">;
  decoded: Counter<"proto">;
  dropped: Counter<"reason">;
  sipFailed: Counter<"reason">;
  tsFallback: Counter<"reason">;
  reanchors: Counter;
  stored: Counter<"table">;
}

export function pipelineMetrics(reg: MetricsRegistry): PipelineMetrics {
  const m: PipelineMetrics = {
    received: reg.counter("svc_hep_packets_received_total", "HEP packets received, per transport.", ["transport"]),
    bytes: reg.counter("svc_hep_bytes_received_total", "HEP bytes received, per transport.", ["transport"]),
    decoded: reg.counter("svc_hep_packets_decoded_total", "HEP packets decoded, per HEP protocol type.", ["proto"]),
    dropped: reg.counter(
      "svc_hep_packets_dropped_total",
      "HEP packets not stored, per reason (decode errors by reason, auth_failed, backlog_full, table_pending).",
      ["reason"],
    ),
    sipFailed: reg.counter(
      "svc_sip_parse_failures_total",
      "SIP payloads that did not parse (stored raw in hep_proto_1_default), per reason.",
      ["reason"],
    ),
    tsFallback: reg.counter(
      "svc_hep_timestamp_fallback_total",
      "Packets whose agent timestamp was not used as is, per reason: missing (no time, or 0: receive time used), too_old / too_new (outside [now - ingest.hep.max_age_days, now + ingest.hep.max_clock_skew_sec]: shifted by the source's offset, spacing kept; receive time when ingest.hep.time_shift.enable is false).",
      ["reason"],
    ),
    reanchors: reg.counter(
      "svc_hep_time_shift_reanchors_total",
      "Times the time offset of a HEP source with a clock outside the accepted window was fixed again (shifted time too far ahead or behind, or the source idle for ingest.hep.time_shift.reanchor_gap_sec).",
    ),
    stored: reg.counter("svc_hep_rows_accepted_total", "Rows handed to the lake, per table.", ["table"]),
  };
  for (const r of HEP_DECODE_REASONS) m.dropped.inc({ reason: r }, 0);
  for (const r of TIME_FALLBACK_REASONS) m.tsFallback.inc({ reason: r }, 0);
  return m;
}

export class HepPipeline {
  private readonly ready = new Set<string>();
  /** Packets of a protocol type whose table is being created (copied: receive buffers are reused). */
  private readonly pending = new Map<string, Array<{ p: HepPacket; live: boolean }>>();
  private readonly sipOpts: { customHeaders: readonly string[]; correlationHeaders: readonly string[] };
  private readonly results = new Map<string, StoreResult>();
  tap: PacketTap | undefined;
  /**
   * Every packet that decoded and passed the auth key, as received (the forward log and the live
   * mirror, docs/DEPLOY.md): called synchronously, `buf` valid only during the call. Unset when neither is on.
   */
  raw: ((buf: Uint8Array) => void) | undefined;
  /** Capture agents seen (drained by main.ts into the settings database). */
  readonly agents = new AgentTracker();
  /** Coarse clock for agent last-seen times (a per-packet Date.now() costs more than the rest). */
  private nowMs = Date.now();
  private clock: ReturnType<typeof setInterval> | undefined;
  private readonly clocks: SourceClocks;
  private reanchorsSeen = 0;
  /** Kernel receive time of the packet being handled (shared UDP port), for its rows' ids. */
  private receivedAtMs: number | undefined;

  constructor(
    private readonly sink: Sink,
    private readonly opts: PipelineOptions,
    private readonly metrics: PipelineMetrics,
    private readonly logger: Logger,
  ) {
    this.sipOpts = { customHeaders: opts.customHeaders, correlationHeaders: opts.correlationHeaders };
    const ts = opts.timeShift;
    this.clocks = new SourceClocks(
      {
        maxAgeMs: opts.maxAgeMs,
        maxSkewMs: opts.maxSkewMs,
        shift: ts.enable,
        maxAheadMs: ts.maxAheadMs,
        reanchorGapMs: ts.reanchorGapMs,
        maxSources: ts.maxSources,
      },
      opts.clockTable,
    );
  }

  /** Defines the seeded tables (SIP call/registration/default, 5, 34, 35, 53, 100). */
  async start(): Promise<void> {
    this.clock = setInterval(() => (this.nowMs = Date.now()), 250);
    this.clock.unref?.();
    for (const def of seededHepTables()) {
      await this.sink.defineTable(def);
      this.ready.add(`${def.schema}.${def.name}`);
    }
  }

  stop(): void {
    if (this.clock) clearInterval(this.clock);
  }

  /**
   * One HEP packet (a UDP datagram, one TCP frame, one HTTP frame) from `remoteIp`. Never throws.
   * Returns undefined when the packet was taken (stored, or queued for a table being created), else
   * the reason it was dropped: the label it was counted under in svc_hep_packets_dropped_total.
   */
  handlePacket(buf: Uint8Array, transport: Transport, remoteIp?: string, receivedAtMs?: number): string | undefined {
    const r = this.storePacket(buf, transport, remoteIp, receivedAtMs);
    return r.ok ? undefined : r.reason;
  }

  /**
   * handlePacket with the table key the row went to (or is queued for): the forward receiver waits
   * until those tables' rows are in the spool before it acknowledges (src/cluster/forward-receiver.ts).
   */
  storePacket(buf: Uint8Array, transport: Transport, remoteIp?: string, receivedAtMs?: number): Result<string, string> {
    const m = this.metrics;
    m.received.inc({ transport });
    m.bytes.inc({ transport }, buf.length);
    // The decoder keeps any agent time (unbounded window); the window is applied per source below.
    const nowMs = Date.now();
    const r = decodeHep(buf, { nowMs, maxSkewMs: Number.POSITIVE_INFINITY, maxAgeMs: Number.POSITIVE_INFINITY });
    if (!r.ok) {
      m.dropped.inc({ reason: r.reason });
      return fail(r.reason);
    }
    const p = r.value;
    if (this.opts.authKey && p.authKey !== this.opts.authKey) {
      m.dropped.inc({ reason: AUTH_FAILED });
      return fail(AUTH_FAILED);
    }
    this.raw?.(buf);
    this.agents.observe(p, remoteIp, this.nowMs);
    const timeReason = this.clocks.apply(p as ClockedPacket, `${remoteIp ?? ""}|${p.captureId}`, nowMs);
    if (timeReason) {
      m.tsFallback.inc({ reason: timeReason });
      if (this.clocks.reanchors !== this.reanchorsSeen) {
        m.reanchors.inc(undefined, this.clocks.reanchors - this.reanchorsSeen);
        this.reanchorsSeen = this.clocks.reanchors;
      }
    }
    this.receivedAtMs = receivedAtMs;
    const stored = this.accept(p);
    this.receivedAtMs = undefined;
    return stored;
  }

  /**
   * A packet decoded elsewhere (PCAP import): the same routing, rows and counters as a HEP packet
   * after its decode. `forceSipTable` sends every parsed SIP message to that table instead of
   * routing by CSeq method (docs/API.md "Import form fields"); unparseable SIP still goes to default.
   */
  ingestDecoded(p: HepPacket, opts: { forceSipTable?: SipTableKind } = {}): StoreResult {
    if (p.tsFallback) this.metrics.tsFallback.inc({ reason: "missing" });
    return this.accept(p, opts.forceSipTable, false);
  }

  private accept(p: HepPacket, forceSipTable?: SipTableKind, live = true): StoreResult {
    const m = this.metrics;
    m.decoded.inc({ proto: String(p.protoType) });
    try {
      return this.store(p, forceSipTable, live);
    } catch (e) {
      // A broken invariant in row building must not take the listener down; count and log once per kind.
      m.dropped.inc({ reason: "internal_error" });
      this.logger.error("row building failed", { error: e, proto: p.protoType });
      return fail("internal_error", errorMessage(e));
    }
  }

  /**
   * A byte stream of back-to-back HEP3 packets (HTTP body): every packet is handled like a
   * datagram. `accepted` counts the packets taken, `rejected` the others per drop reason; the
   * stream stops at bytes that are not a HEP3 frame (`unframed`, counted as one dropped packet).
   */
  handleStream(buf: Uint8Array, transport: Transport, remoteIp?: string): StreamResult {
    let off = 0;
    let accepted = 0;
    const rejected: Record<string, number> = {};
    while (off < buf.length) {
      const len = hepFrameLength(buf, off);
      if (typeof len !== "number") {
        // The unframeable rest counts as one received packet, so received = decoded + dropped holds.
        const reason = len === "need_more" ? "truncated_frame" : "bad_frame";
        this.metrics.received.inc({ transport });
        this.metrics.dropped.inc({ reason });
        rejected[reason] = (rejected[reason] ?? 0) + 1;
        return { accepted, rejected, unframed: reason };
      }
      const dropped = this.handlePacket(buf.subarray(off, off + len), transport, remoteIp);
      if (dropped === undefined) accepted++;
      else rejected[dropped] = (rejected[dropped] ?? 0) + 1;
      off += len;
    }
    return { accepted, rejected };
  }

  /** Writes one row; the table key it went to (or is queued for), or why it was dropped. */
  private store(p: HepPacket, forceSipTable?: SipTableKind, live = true): StoreResult {
    if (p.protoType === 1) {
      const sr = parseSip(p.payload, this.sipOpts);
      if (sr.ok) {
        const kind: SipTableKind = forceSipTable ?? sipTableFor(sr.value.cseqMethod);
        const key = `main.${hepTableName(1, kind)}`;
        const w = this.sink.row(key, this.receivedAtMs);
        if (!w) return this.drop(key);
        writeSipRow(w, p, sr.value, kind === "registration");
        return this.stored(key, p, sr.value, live);
      }
      this.metrics.sipFailed.inc({ reason: sr.reason });
      const key = SIP_UNPARSED;
      const w = this.sink.row(key, this.receivedAtMs);
      if (!w) return this.drop(key);
      writeOtherRow(w, p, "SIP", sr.reason);
      return this.stored(key, p, undefined, live);
    }
    const key = `main.${hepTableName(p.protoType)}`;
    if (!this.ready.has(key)) {
      this.defineLater(p.protoType, key, p, live);
      return this.okFor(key);
    }
    const w = this.sink.row(key, this.receivedAtMs);
    if (!w) return this.drop(key);
    writeOtherRow(w, p, hepProtoName(p.protoType));
    return this.stored(key, p, undefined, live);
  }

  private stored(key: string, p: HepPacket, sip: SipMessage | undefined, live: boolean): StoreResult {
    this.metrics.stored.inc({ table: key });
    if (live) this.tap?.(p, sip);
    return this.okFor(key);
  }

  /** One immutable result per table: the per-packet path allocates nothing for it. */
  private okFor(key: string): StoreResult {
    let r = this.results.get(key);
    if (!r) this.results.set(key, (r = Object.freeze(ok(key))));
    return r;
  }

  private drop(_key: string): StoreResult {
    this.metrics.dropped.inc({ reason: "backlog_full" });
    return BACKLOG_FULL;
  }

  /**
   * A protocol type seen for the first time gets its table (hep_proto_<N>_default). Packets that
   * arrive while it is being created wait in a bounded queue (overflow counted as `table_pending`).
   */
  private defineLater(proto: number, key: string, p: HepPacket, live: boolean): void {
    const queued = this.pending.get(key);
    if (queued) {
      if (queued.length < 10_000) queued.push({ p: { ...p, payload: p.payload.slice() }, live });
      else this.metrics.dropped.inc({ reason: "table_pending" });
      return;
    }
    this.pending.set(key, [{ p: { ...p, payload: p.payload.slice() }, live }]);
    this.sink
      .defineTable(hepTableDef(proto))
      .then(() => {
        this.ready.add(key);
        this.logger.info("new HEP protocol table", { table: key });
        for (const q of this.pending.get(key) ?? []) this.store(q.p, undefined, q.live);
      })
      .catch((e) => {
        this.metrics.dropped.inc({ reason: "table_pending" }, this.pending.get(key)?.length ?? 0);
        this.logger.error("cannot create table", { table: key, error: e });
      })
      .finally(() => this.pending.delete(key));
  }
}
