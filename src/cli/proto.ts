/**
 * `--proto` names (docs/CLI.md "Proto names"): hyphens, spaces, underscores and case are
 * ignored, so `OTLP-Traces`, `otlp traces` and `otlp_traces` are all 200. Integers are HEP
 * protocol types (chunk 0x000b) 0..65535.
 */
export const PROTO_NAMES: Readonly<Record<string, number>> = {
  sip: 1,
  rtcp: 5,
  rtp: 34,
  dns: 35,
  log: 100,
  otlp_traces: 200,
  otlp_metrics: 201,
  otlp_logs: 202,
  lp: 300,
};

const squash = (s: string) => s.toLowerCase().replace(/[-_\s]+/g, "");
const BY_SQUASHED = new Map(Object.entries(PROTO_NAMES).map(([k, v]) => [squash(k), v]));

export function parseProto(text: string): number | undefined {
  const s = text.trim();
  if (/^\d+$/.test(s)) {
    const n = Number(s);
    return n <= 65535 ? n : undefined;
  }
  return BY_SQUASHED.get(squash(s));
}

export function protoName(proto: number): string {
  return Object.entries(PROTO_NAMES).find(([, v]) => v === proto)?.[0] ?? String(proto);
}

export const isOtlp = (proto: number) => proto >= 200 && proto <= 202;

/** `call` for SIP, `default` for the other HEP types and OTLP; line protocol has no default. */
export function defaultEventType(proto: number): string | undefined {
  if (proto === 1) return "call";
  if (proto === 300) return undefined;
  return "default";
}

/** Whether `eventType` is valid for `proto` (docs/API.md "Protocol types"); the message says why not. */
export function checkEventType(proto: number, eventType: string): string | undefined {
  if (proto === 1) return ["call", "registration", "default"].includes(eventType) ? undefined : `--event-type for SIP is call, registration or default, not "${eventType}"`;
  if (proto === 300) return /^[A-Za-z0-9_]+__[A-Za-z0-9_]+$/.test(eventType) ? undefined : `--event-type for line protocol is <schema>__<table>, not "${eventType}"`;
  return eventType === "default" ? undefined : `--event-type for proto ${proto} is default, not "${eventType}"`;
}
