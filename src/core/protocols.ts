/**
 * The one registry of the protocol types svc stores (docs/API.md "Protocol types"): number, `--proto` name,
 * label, event types and the lake table of each. Server, CLI and dashboard read it (the dashboard
 * imports this file by path, so it stays free of other imports). Adding a protocol with its own
 * table is one entry here, its row writer and its mapping seed.
 *
 * Numbers are HEP capture protocol types (chunk 0x000b) below 200; 200-202 are the OTLP signals and
 * 300 line protocol, which have no HEP number of their own.
 */

export interface Protocol {
  /** The protocol type: `proto_type` of the rows, `hepid` of the mappings. */
  readonly id: number;
  /** The `--proto` name of the CLI, also the stream's and MCP's (lower case); none: the number. */
  readonly name?: string;
  /** What the dashboard and the CLI print. */
  readonly label: string;
  /** Event types with their own table; the first is the default one. */
  readonly eventTypes: readonly string[];
  /** Media quality reports that the QoS view and the call's events read. */
  readonly media?: "rtcp" | "agent";
}

/** 35 is DNS and 53 DNS too; a 35 row with a MOS figure is a media report (docs/API.md "Protocol types"). */
export const PROTOCOLS: readonly Protocol[] = [
  { id: 1, name: "sip", label: "SIP", eventTypes: ["call", "registration", "default"] },
  { id: 5, name: "rtcp", label: "RTCP", eventTypes: ["default"], media: "rtcp" },
  { id: 34, name: "rtp", label: "RTP Agent Report", eventTypes: ["default"], media: "agent" },
  { id: 35, name: "dns", label: "DNS (35)", eventTypes: ["default"], media: "agent" },
  { id: 53, label: "DNS", eventTypes: ["default"] },
  { id: 100, name: "log", label: "Logs", eventTypes: ["default"] },
  { id: 200, name: "otlp_traces", label: "OTLP Traces", eventTypes: ["default"] },
  { id: 201, name: "otlp_metrics", label: "OTLP Metrics", eventTypes: ["default"] },
  { id: 202, name: "otlp_logs", label: "OTLP Logs", eventTypes: ["default"] },
  { id: 300, name: "lp", label: "Line Protocol", eventTypes: [] },
];

const BY_ID = new Map(PROTOCOLS.map((p) => [p.id, p]));
const squash = (s: string) => s.toLowerCase().replace(/[-_\s]+/g, "");
const BY_NAME = new Map(PROTOCOLS.flatMap((p) => (p.name ? [[squash(p.name), p.id] as const] : [])));

export const protocol = (id: number): Protocol | undefined => BY_ID.get(id);

/** The label of a protocol type; `HEP <n>` for a type svc has no name for. */
export const protoLabel = (id: number): string => BY_ID.get(id)?.label ?? `HEP ${id}`;

/** The `--proto` name of a protocol type, or its number as text. */
export const protoName = (id: number): string => BY_ID.get(id)?.name ?? String(id);

/** A `--proto` value: a name (hyphens, spaces, underscores and case ignored) or a number 0..65535. */
export function parseProto(text: string): number | undefined {
  const s = text.trim();
  if (/^\d+$/.test(s)) {
    const n = Number(s);
    return n <= 65535 ? n : undefined;
  }
  return BY_NAME.get(squash(s));
}

/** Protocol types of media quality reports, in the order the QoS view lists them. */
export const mediaProtos = (kind?: "rtcp" | "agent"): number[] =>
  PROTOCOLS.filter((p) => (kind ? p.media === kind : p.media)).map((p) => p.id);

/** The lake table (without schema) of HEP protocol type `proto` and event type `eventType`. */
export function hepTableName(proto: number, eventType = "default"): string {
  return proto === 1 ? `hep_proto_1_${eventType}` : `hep_proto_${proto}_default`;
}

/** The lake's key (`main.<table>`) of a HEP protocol type and event type. */
export const hepTableKey = (proto: number, eventType = "default"): string => `main.${hepTableName(proto, eventType)}`;
