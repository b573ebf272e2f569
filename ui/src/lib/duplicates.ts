/**
 * Copies of one SIP message seen by several capture points (docs/CALL-VIEW.md "Duplicates"): the
 * same packet (same direction IP:port → IP:port and the same payload; without a payload, the same
 * Call-ID, CSeq and method or status) captured by a different capture point (HEP capture id and
 * node name) within `windowMs` of the first copy. A retransmission is not a copy: it comes again
 * from the same capture point, and no earlier than RFC 3261's T1 (500 ms) after the original,
 * beyond the default window. Pure; see duplicates.test.ts.
 */
import type { TxMessage } from "./transaction.ts";

/**
 * What the copy check reads of a message of the transaction window: members of the server's row
 * schema (TxMessage), data_extra's capture point and CSeq among them (MessageDataExtraSchema).
 */
export type CapturedMessage = Pick<
  TxMessage,
  | "uuid"
  | "timestamp_us"
  | "session_id"
  | "src_ip"
  | "dst_ip"
  | "src_port"
  | "dst_port"
  | "event"
  | "cseq_method"
  | "payload"
  | "node_id"
  | "data_extra"
>;

export interface Duplicates {
  /** uuid of each copy → uuid of the first copy (the one kept). */
  copyOf: Map<string, string>;
  /** uuid of every kept message → the capture points that saw it, first copy first. */
  seenBy: Map<string, string[]>;
}

/** Two capture points within this many ms are taken as seeing the same packet (below T1 = 500 ms). */
export const DUPLICATE_WINDOW_MS = 100;

/** data_extra when it is the JSON object the ingest writes (not the text of one that did not parse). */
const extra = (m: CapturedMessage) => (m.data_extra && typeof m.data_extra === "object" ? m.data_extra : undefined);

/** `capture 2001 (edge-a)`: the HEP capture id and node name of the agent that sent the copy. */
export function captureLabel(m: CapturedMessage): string {
  const id = m.node_id ?? extra(m)?.capture_id;
  const name = extra(m)?.node_name ?? "";
  if (id === null || id === undefined) return name ? `capture ${name}` : "capture (unknown)";
  return name ? `capture ${String(id)} (${name})` : `capture ${String(id)}`;
}

function fingerprint(m: CapturedMessage): string {
  const dir = `${m.src_ip}|${m.src_port ?? ""}|${m.dst_ip}|${m.dst_port ?? ""}`;
  if (m.payload) return `${dir}|p|${m.payload}`;
  const cseq = extra(m)?.cseq ?? "";
  return `${dir}|k|${m.session_id}|${String(cseq)}|${m.cseq_method ?? ""}|${m.event}`;
}

export function findDuplicates(messages: readonly CapturedMessage[], windowMs = DUPLICATE_WINDOW_MS): Duplicates {
  const copyOf = new Map<string, string>();
  const seenBy = new Map<string, string[]>();
  const open = new Map<string, Array<{ uuid: string; tsUs: number; captures: string[] }>>();
  const sorted = [...messages].sort((a, b) => a.timestamp_us - b.timestamp_us);
  for (const m of sorted) {
    const fp = fingerprint(m);
    const capture = captureLabel(m);
    const groups = open.get(fp) ?? [];
    const group = groups.find((g) => m.timestamp_us - g.tsUs <= windowMs * 1000 && !g.captures.includes(capture));
    if (group) {
      group.captures.push(capture);
      copyOf.set(m.uuid, group.uuid);
      continue;
    }
    const g = { uuid: m.uuid, tsUs: m.timestamp_us, captures: [capture] };
    groups.push(g);
    open.set(fp, groups);
    seenBy.set(m.uuid, g.captures);
  }
  return { copyOf, seenBy };
}
