import { hostText } from "../../core/index.ts";
import { storedPayloadBytes, storedRowToPcapRecord, writePcap, type PcapRecord } from "../../pcap/index.ts";

/**
 * The two export formats (docs/API.md "Exports and share links"), built
 * from the call view's message items (TransactionService.messages: `timestamp` ISO text,
 * `timestamp_us`, addresses, ports, aliases, `payload`, `data_extra`), already in time order.
 *  - PCAP: one frame per message, Ethernet + IPv4/IPv6 + UDP + the payload bytes as captured, at
 *    the message's own microsecond time (src/pcap/write.ts).
 *  - TEXT: one block per message for people: a header line (number, time, transport, source and
 *    destination with ports and alias names), the SIP text, a blank line. Line ends are LF in
 *    this file; the PCAP keeps the exact bytes.
 */
export type ExportFormat = "pcap" | "text";
export const EXPORT_FORMATS: readonly ExportFormat[] = ["pcap", "text"];

export type MessageItem = Record<string, unknown>;

const num = (v: unknown): number | undefined =>
  typeof v === "number"
    ? v
    : typeof v === "bigint"
      ? Number(v)
      : typeof v === "string" && v !== ""
        ? Number(v)
        : undefined;

/** The stored payload's bytes: rows that were not valid UTF-8 are kept base64 (data_extra.payload_encoding). */
export const payloadBytes = (m: MessageItem): Uint8Array => storedPayloadBytes(m);

export const toPcapRecord = (m: MessageItem): PcapRecord => storedRowToPcapRecord(m, num(m.timestamp_us) ?? 0);

function isBase64(m: MessageItem): boolean {
  const extra = m.data_extra;
  return (
    typeof extra === "object" && extra !== null && (extra as Record<string, unknown>).payload_encoding === "base64"
  );
}

export function renderPcap(items: readonly MessageItem[]): Uint8Array {
  return writePcap(items.map(toPcapRecord));
}

/** `10.0.0.1:5060 (pbx-a)`, `[2001:db8::1]:5060`. */
function endpoint(ip: unknown, port: unknown, alias: unknown): string {
  const a = String(ip ?? "");
  const host = hostText(a);
  const name = typeof alias === "string" && alias !== "" ? ` (${alias})` : "";
  return `${host}:${num(port) ?? 0}${name}`;
}

export function renderText(items: readonly MessageItem[], sessions: readonly string[]): string {
  const out: string[] = [];
  const first = items[0];
  const last = items.at(-1);
  out.push(`# svc transaction export: ${items.length} message(s) of ${sessions.join(", ")}`);
  if (first && last) out.push(`# from ${String(first.timestamp)} to ${String(last.timestamp)}`);
  out.push("");
  items.forEach((m, i) => {
    const proto = typeof m.protocol === "string" && m.protocol !== "" ? m.protocol : "UDP";
    out.push(
      `[${i + 1}] ${String(m.timestamp)} ${proto} ${endpoint(m.src_ip, m.src_port, m.src_alias)} -> ${endpoint(m.dst_ip, m.dst_port, m.dst_alias)}`,
    );
    const text = isBase64(m) ? `(binary payload, base64)\n${String(m.payload ?? "")}` : String(m.payload ?? "");
    out.push(text.replace(/\r\n/g, "\n").replace(/\n+$/, ""));
    out.push("");
  });
  return `${out.join("\n")}\n`;
}

/** `call-<first Call-ID, file-name safe>-<UTC yyyymmddThhmmss of the first message>.<ext>`; `calls-<first>-and-<n>-more-…` for several. */
export function exportFileName(sessions: readonly string[], firstUs: number | undefined, format: ExportFormat): string {
  const sid =
    (sessions[0] ?? "export")
      .replace(/[^A-Za-z0-9._-]+/g, "_")
      .replace(/^[._]+/, "")
      .slice(0, 48) || "export";
  const when =
    firstUs === undefined
      ? ""
      : `-${new Date(Math.floor(firstUs / 1000)).toISOString().replace(/[-:]/g, "").slice(0, 15)}`;
  // Several Call-IDs (a combined call view): the name says so, not only the first one.
  const what = sessions.length > 1 ? `calls-${sid}-and-${sessions.length - 1}-more` : `call-${sid}`;
  return `${what}${when}.${format === "pcap" ? "pcap" : "txt"}`;
}

export const CONTENT_TYPE: Record<ExportFormat, string> = {
  pcap: "application/vnd.tcpdump.pcap",
  text: "text/plain; charset=utf-8",
};
