/**
 * `--proto` names and numbers come from the one registry (docs/API.md "Protocol types"): hyphens,
 * spaces, underscores and case are ignored, so `OTLP-Traces`, `otlp traces` and `otlp_traces` are
 * all 200. Integers are protocol types 0..65535.
 */
export { parseProto, protoName } from "../core/protocols.ts";

export const isOtlp = (proto: number) => proto >= 200 && proto <= 202;

/** `call` for SIP, `default` for the other HEP types and OTLP; line protocol has no default. */
export function defaultEventType(proto: number): string | undefined {
  if (proto === 1) return "call";
  if (proto === 300) return undefined;
  return "default";
}

/** Whether `eventType` is valid for `proto` (docs/API.md "Protocol types"); the message says why not. */
export function checkEventType(proto: number, eventType: string): string | undefined {
  if (proto === 1)
    return ["call", "registration", "default"].includes(eventType)
      ? undefined
      : `--event-type for SIP is call, registration or default, not "${eventType}"`;
  if (proto === 300)
    return /^[A-Za-z0-9_]+__[A-Za-z0-9_]+$/.test(eventType)
      ? undefined
      : `--event-type for line protocol is <schema>__<table>, not "${eventType}"`;
  return eventType === "default" ? undefined : `--event-type for proto ${proto} is default, not "${eventType}"`;
}
