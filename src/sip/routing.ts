/**
 * Which logical SIP table a message goes to (document 1: proto 1 event types `call`,
 * `registration`, `default`), decided by the CSeq method so responses follow their requests.
 */
export type SipTable = "call" | "registration" | "default";

/** Methods of the INVITE dialog: RFC 3261 (INVITE, ACK, BYE, CANCEL), RFC 3262 PRACK, RFC 3311 UPDATE, RFC 6086 INFO. */
const CALL_METHODS = new Set(["INVITE", "ACK", "PRACK", "UPDATE", "BYE", "CANCEL", "INFO"]);

export function sipTableFor(cseqMethod: string): SipTable {
  // Methods are upper case on the wire (RFC 3261 is case-sensitive): compared as they are first
  // (a switch: a Set lookup hashes the fresh string of every packet).
  switch (cseqMethod) {
    case "INVITE":
    case "ACK":
    case "BYE":
    case "CANCEL":
    case "PRACK":
    case "UPDATE":
    case "INFO":
      return "call";
    case "REGISTER":
      return "registration";
  }
  const m = cseqMethod.toUpperCase();
  if (CALL_METHODS.has(m)) return "call";
  return m === "REGISTER" ? "registration" : "default";
}
