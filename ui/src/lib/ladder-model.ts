/**
 * The ladder of the transaction window (docs/CALL-VIEW.md): columns (ladder-columns.ts), one arrow
 * per SIP message oldest first, copies seen by another capture point folded into the first copy
 * when asked (duplicates.ts), and the call's RTCP reports, agent media reports and log lines as
 * marker rows in time order. Pure; see ladder-model.test.ts.
 */
import { eventClass, sipLabel } from "./format.ts";
import { captureLabel, findDuplicates } from "./duplicates.ts";
import { assignColumns, endpointText, type AliasLookup, type ColumnMode, type LadderColumn } from "./ladder-columns.ts";
import type { TxMessage } from "./transaction.ts";

type CallEventItem = import("../../../src/api/search/call-events.ts").CallEventItem;

/** The members a row of `POST /transactions/events` may leave NULL, unlike a SIP message (src/api/search/model.ts CallEventSchema). */
type EventNullable =
  | "src_ip"
  | "src_port"
  | "dst_ip"
  | "dst_port"
  | "session_id"
  | "proto_type"
  | "node_id"
  | "payload";

/**
 * A row of `POST /transactions/events`: a message row with its timeline kind and summary, whose
 * addresses, ports, Call-ID and payload are as the server's schema has them (a log row written by
 * another writer may carry no address).
 */
export type CallEvent = Omit<TxMessage, EventNullable> &
  Pick<CallEventItem, EventNullable | "kind" | "summary" | "qos">;

export interface LadderArrow {
  /** Vertical position: index among all rows (arrows and markers). */
  slot: number;
  /** 1-based number among the arrows shown. */
  number: number;
  uuid: string;
  from: number;
  to: number;
  label: string;
  sdp: boolean;
  cls: string;
  tsMs: number;
  /** Time since the previous arrow shown (0 for the first). */
  deltaMs: number;
  /** Index of the Call-ID in `sessions`, so each leg gets its own marker colour. */
  leg: number;
  srcPort: number | null;
  dstPort: number | null;
  /** Capture points that saw this message (more than one when copies were found). */
  seenBy: string[];
  /** Set on a copy shown while duplicates are not hidden: the capture point of this copy. */
  copyFrom: string | null;
  /** Received over the live stream (not in the lake yet). */
  live: boolean;
}

export type MarkerKind = CallEventItem["kind"];

/** Each marker kind's band tag and name (docs/CALL-VIEW.md "RTCP and log events"). */
export const MARKER_KINDS: Record<MarkerKind, { tag: string; name: string }> = {
  rtcp: { tag: "RTCP", name: "RTCP report" },
  media: { tag: "MEDIA", name: "Media report" },
  log: { tag: "LOG", name: "Log event" },
};

export interface LadderMarker {
  slot: number;
  uuid: string;
  kind: MarkerKind;
  tsMs: number;
  summary: string;
  /** `10.0.0.1:40001 → 10.0.0.2:42001` */
  path: string;
}

export interface Ladder {
  columns: LadderColumn[];
  arrows: LadderArrow[];
  markers: LadderMarker[];
  sessions: string[];
  /** Copies of messages found (seen by a second capture point). */
  duplicates: number;
  /** Copies left out of the arrows (0 unless hideDuplicates). */
  hidden: number;
}

export interface LadderOptions {
  mode: ColumnMode;
  /** Alias names from the alias list; without it the row's server-resolved alias is used. */
  lookup?: AliasLookup;
  hideDuplicates: boolean;
  /** Timeline events to show as markers ([] to show none). */
  events?: readonly CallEvent[];
}

export function ladderModel(messages: readonly TxMessage[], opts: LadderOptions): Ladder {
  const dups = findDuplicates(messages);
  const shown = opts.hideDuplicates ? messages.filter((m) => !dups.copyOf.has(m.uuid)) : [...messages];
  const { columns, from, to } = assignColumns(shown, opts.mode, opts.lookup);
  const sessions: string[] = [];
  for (const m of messages) if (!sessions.includes(m.session_id)) sessions.push(m.session_id);

  type Row = { tsUs: number; order: number; arrow?: number; event?: CallEvent };
  const rows: Row[] = shown.map((m, i) => ({ tsUs: m.timestamp_us, order: i, arrow: i }));
  (opts.events ?? []).forEach((e, i) => rows.push({ tsUs: e.timestamp_us, order: shown.length + i, event: e }));
  // Stable by time; at the same time a SIP message goes before a report (it caused it).
  rows.sort((a, b) => a.tsUs - b.tsUs || a.order - b.order);

  const arrows: LadderArrow[] = [];
  const markers: LadderMarker[] = [];
  let prevMs: number | undefined;
  rows.forEach((r, slot) => {
    if (r.event) {
      const e = r.event;
      markers.push({
        slot,
        uuid: e.uuid,
        kind: e.kind,
        tsMs: e.timestamp_us / 1000,
        summary: e.summary,
        path: `${e.src_ip === null ? "—" : endpointText(e.src_ip, e.src_port)} → ${e.dst_ip === null ? "—" : endpointText(e.dst_ip, e.dst_port)}`,
      });
      return;
    }
    const i = r.arrow!;
    const m = shown[i]!;
    const tsMs = m.timestamp_us / 1000;
    const { label, sdp } = sipLabel(m.payload ?? "", m.label ?? m.event);
    const original = dups.copyOf.get(m.uuid);
    arrows.push({
      slot,
      number: arrows.length + 1,
      uuid: m.uuid,
      from: from[i]!,
      to: to[i]!,
      label,
      sdp,
      cls: eventClass(m.event),
      tsMs,
      deltaMs: prevMs === undefined ? 0 : tsMs - prevMs,
      leg: sessions.indexOf(m.session_id),
      srcPort: m.src_port,
      dstPort: m.dst_port,
      seenBy: dups.seenBy.get(original ?? m.uuid) ?? [captureLabel(m)],
      copyFrom: original === undefined ? null : captureLabel(m),
      live: m.live === true,
    });
    prevMs = tsMs;
  });
  return { columns, arrows, markers, sessions, duplicates: dups.copyOf.size, hidden: messages.length - shown.length };
}
