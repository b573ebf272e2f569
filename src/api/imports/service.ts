import { AppError, isoFromUs, type Counter } from "../../core/index.ts";
import type { HepPacket } from "../../hep/index.ts";
import type { HepPipeline } from "../../ingest/index.ts";
import type { Lake } from "../../lake/index.ts";
import {
  countCaptureRecords,
  detectCaptureFormat,
  iterPackets,
  SipExtractor,
  type CapturedSip,
  type ExtractStat,
  type PcapReason,
  type SipTransport,
} from "../../pcap/index.ts";
import type { SipTableChoice } from "./form.ts";
import { CaptureMedia } from "./media.ts";
import type { ImportReport } from "./schema.ts";
import { shiftWords } from "./shift-words.ts";

/**
 * PCAP / pcapng import (docs/ADMIN.md "Import PCAP"): SIP messages are extracted from the
 * capture (UDP, reassembled TCP, WebSocket, SCTP; src/pcap) and handed to the HEP pipeline as
 * already-decoded packets, so they are routed, parsed and stored exactly like captured HEP
 * traffic. Synchronous: when the report is returned the rows are queryable (`lake.sync()`).
 */
export interface ImportOptions {
  fileName: string;
  overrideToCurrentTime: boolean;
  forceSipTable?: SipTableChoice;
  /** Clock for the override (tests); epoch µs. */
  nowUs?: number;
}

export interface ImportDeps {
  pipeline: HepPipeline;
  lake: Lake;
  /** storage.lakehouse.max_buffered_rows: above it the import waits for a flush instead of dropping. */
  maxBufferedRows: number;
  /** storage.lakehouse.retention.days (0 = keep): older messages get a warning. */
  retentionDays: number;
  /** coordinator.imports.max_records: a capture with more packet records is refused (413) before parsing. */
  maxRecords: number;
  /** svc_pcap_import_frames_total: records parsed, counted slice by slice while an import runs. */
  framesParsed?: Counter;
}

const IP_PROTOCOL: Record<SipTransport, number> = { udp: 17, tcp: 6, ws: 6, sctp: 132 };
const PLAIN_COUNTS = new Set(["frames", "sip_messages"]);
const CHUNK = 2000;

/** A CapturedSip as the packet a HEP agent would have sent for it (HEP3, proto 1 SIP, capture id 0). */
export function capturedToPacket(m: CapturedSip, shiftUs: number): HepPacket {
  return {
    version: 3,
    ipFamily: m.ipFamily,
    ipProtocol: IP_PROTOCOL[m.transport],
    srcIp: m.srcIp,
    dstIp: m.dstIp,
    srcPort: m.srcPort,
    dstPort: m.dstPort,
    timestampUs: m.timestampUs + shiftUs,
    tsFallback: false,
    protoType: 1,
    captureId: 0,
    nodeName: "pcap-import",
    payload: m.payload,
    payloadCompressed: false,
    vendorChunks: 0,
    unknownChunks: 0,
  };
}

/**
 * The capture is read in slices of at most SLICE_PACKETS packets (or SLICE_MS of parsing),
 * yielding to the event loop between them, so other requests are answered while a large
 * capture is parsed. Each slice's messages go to the pipeline at once and are then dropped: only
 * counts grow with the capture, never arrays of packets or messages (docs/ARCHITECTURE.md
 * "PCAP import").
 */
const SLICE_PACKETS = 4096;
const SLICE_MS = 10;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

interface ExtractPass {
  stats: Partial<Record<ExtractStat, number>>;
  error: { reason: PcapReason; detail?: string } | null;
}

/** One pass of the extractor over the capture; `onMessages` gets each slice's messages in frame order. */
async function extractInSlices(
  bytes: Uint8Array,
  onMessages: (ms: CapturedSip[]) => Promise<void>,
  onFrames: (n: number) => void,
  media?: CaptureMedia,
): Promise<ExtractPass> {
  const extractor = new SipExtractor(media ? { onOtherUdp: (d) => media.datagram(d) } : {});
  let out: CapturedSip[] = [];
  let error: ExtractPass["error"] = null;
  let inSlice = 0;
  let sliceStart = performance.now();
  const endSlice = async () => {
    onFrames(inSlice);
    inSlice = 0;
    const ms = out.sort((a, b) => a.frameNumber - b.frameNumber);
    out = [];
    // With media, every slice: its RTCP rows went to the pipeline as they came, so the backlog check runs too.
    if (ms.length > 0 || media) await onMessages(ms);
    await nextTurn();
    sliceStart = performance.now();
  };
  for (const item of iterPackets(bytes)) {
    if (!item.ok) {
      error = item.detail === undefined ? { reason: item.reason } : { reason: item.reason, detail: item.detail };
      break;
    }
    const before = out.length;
    extractor.addPacket(item.value, out);
    // The SDP of each message, in capture order, names the media of the datagrams that follow.
    if (media) for (let i = before; i < out.length; i++) media.learnSip(out[i]!);
    inSlice++;
    if (
      inSlice >= SLICE_PACKETS ||
      out.length >= CHUNK ||
      ((inSlice & 255) === 0 && performance.now() - sliceStart > SLICE_MS)
    )
      await endSlice();
  }
  // Messages completed at the end of the capture (bytes behind a TCP hole) come last.
  extractor.finish(out);
  await endSlice();
  return { stats: extractor.stats, error };
}

export async function importCapture(bytes: Uint8Array, opts: ImportOptions, deps: ImportDeps): Promise<ImportReport> {
  const format = detectCaptureFormat(bytes);
  if (format === null) {
    throw new AppError("VALIDATION", `file: ${opts.fileName} is not a pcap or pcapng capture (unknown magic number)`, {
      details: { fields: ["file"] },
    });
  }
  const records = countCaptureRecords(bytes);
  if (records > deps.maxRecords) {
    throw new AppError(
      "PAYLOAD_TOO_LARGE",
      `file: ${opts.fileName} holds ${records} ${format === "pcap" ? "packet records" : "pcapng blocks"}, more than coordinator.imports.max_records (${deps.maxRecords}); split it (editcap -c ${deps.maxRecords}) or filter it to SIP first (tshark -Y sip -w)`,
      { details: { fields: ["file"], reason: "max_records", records, max_records: deps.maxRecords } },
    );
  }
  const countFrames = (n: number) => deps.framesParsed?.inc(undefined, n);
  // override_to_current_time moves the capture's first SIP message (lowest frame number) to now;
  // which message that is is only certain after the whole capture (TCP bytes behind a hole are
  // completed at the end), so that import reads the capture twice rather than holding it parsed.
  let shiftUs = 0;
  if (opts.overrideToCurrentTime) {
    let first: CapturedSip | undefined;
    await extractInSlices(
      bytes,
      async (ms) => {
        const m = ms[0];
        if (m && (first === undefined || m.frameNumber < first.frameNumber)) first = m;
      },
      () => {},
    );
    if (first) shiftUs = (opts.nowUs ?? Date.now() * 1000) - first.timestampUs;
  }
  const tables: Record<string, number> = {};
  const transports: Partial<Record<SipTransport, number>> = {};
  const skipped: Record<string, number> = {};
  let sipMessages = 0;
  let imported = 0;
  let minUs = Number.POSITIVE_INFINITY;
  let maxUs = Number.NEGATIVE_INFINITY;
  const store = (p: HepPacket): boolean => {
    const r = deps.pipeline.ingestDecoded(
      p,
      opts.forceSipTable && p.protoType === 1 ? { forceSipTable: opts.forceSipTable } : {},
    );
    if (!r.ok) {
      skipped[r.reason] = (skipped[r.reason] ?? 0) + 1;
      return false;
    }
    const table = r.value.replace(/^main\./, "");
    tables[table] = (tables[table] ?? 0) + 1;
    if (p.protoType === 1) imported++;
    if (p.timestampUs < minUs) minUs = p.timestampUs;
    if (p.timestampUs > maxUs) maxUs = p.timestampUs;
    return true;
  };
  const media = new CaptureMedia(store, shiftUs);
  const x = await extractInSlices(
    bytes,
    async (ms) => {
      sipMessages += ms.length;
      // Bounded memory: rather than letting the writer refuse rows (backlog_full), write them out first.
      if (deps.lake.backlog() + ms.length >= deps.maxBufferedRows) await deps.lake.flush();
      for (const m of ms)
        if (store(capturedToPacket(m, shiftUs))) transports[m.transport] = (transports[m.transport] ?? 0) + 1;
    },
    countFrames,
    media,
  );
  if (deps.lake.backlog() + media.counts.rtp_streams >= deps.maxBufferedRows) await deps.lake.flush();
  media.finish();
  const frames = x.stats.frames ?? 0;
  if (x.error && sipMessages === 0 && frames === 0) {
    throw new AppError(
      "VALIDATION",
      `file: ${opts.fileName} could not be read (${x.error.reason}${x.error.detail ? `: ${x.error.detail}` : ""})`,
      {
        details: { fields: ["file"], reason: x.error.reason },
      },
    );
  }
  if (sipMessages === 0) {
    throw new AppError("VALIDATION", `file: ${opts.fileName} holds no SIP messages (${frames} frames)`, {
      details: { fields: ["file"], stats: x.stats },
    });
  }
  for (const [k, v] of Object.entries(x.stats)) if (!PLAIN_COUNTS.has(k) && v) skipped[k] = v;
  await deps.lake.sync();
  const warnings: string[] = [];
  const hasRows = imported > 0;
  if (hasRows && deps.retentionDays > 0 && minUs < (Date.now() - deps.retentionDays * 86_400_000) * 1000) {
    warnings.push(
      `messages older than storage.lakehouse.retention.days (${deps.retentionDays}) were imported: the next retention pass deletes them; ` +
        "import with override_to_current_time=true to keep them",
    );
  }
  if (x.error)
    warnings.push(`the capture ends inside a record (${x.error.reason}); the packets before it were imported`);
  return {
    file: { name: opts.fileName, bytes: bytes.length, format, frames },
    sip_messages: sipMessages,
    imported,
    tables,
    transports,
    skipped,
    first_timestamp: hasRows ? isoFromUs(minUs) : null,
    last_timestamp: hasRows ? isoFromUs(maxUs) : null,
    first_timestamp_us: hasRows ? minUs : null,
    last_timestamp_us: hasRows ? maxUs : null,
    time_shift_us: shiftUs,
    time_shift: shiftUs === 0 ? null : shiftWords(shiftUs),
    media: media.counts,
    forced_table: opts.forceSipTable ?? null,
    truncated: x.error ? { reason: x.error.reason, ...(x.error.detail ? { detail: x.error.detail } : {}) } : null,
    warnings,
  };
}
