/**
 * SIP Dialog Master, the pure part (docs/GAMES.md "SIP Dialog Master"): a captured SIP message as a
 * ladder step (start line, dialog identifiers, CSeq, RSeq), the built-in textbook flows, and the
 * rules that say which message must come next after a step, each with its RFC section.
 */

export interface FlowStep {
  /** Start-line summary: `INVITE`, `180 Ringing`. */
  label: string;
  method: string | null;
  code: number | null;
  src: string;
  dst: string;
  callId: string;
  fromTag: string;
  toTag: string;
  cseqNum: number;
  cseqMethod: string;
  /** RSeq of a reliable provisional response (RFC 3262 §7.1), else null. */
  rseq: number | null;
  /** Header lines as captured (shown to the player). */
  headers: string[];
}

const HEADER_SHORT: Record<string, string> = { i: "call-id", f: "from", t: "to", v: "via" };

/** Parses one SIP message as a step; null when the payload is not SIP or lacks Call-ID or CSeq. */
export function parseStep(payload: string, src: string, dst: string): FlowStep | null {
  const head = payload.split(/\r?\n\r?\n/)[0] ?? "";
  const lines = head.split(/\r?\n/);
  const first = lines[0] ?? "";
  const resp = /^SIP\/2\.0\s+(\d{3})\s*(.*)$/.exec(first);
  const req = /^([A-Z]+)\s+\S+\s+SIP\/2\.0$/.exec(first);
  if (!resp && !req) return null;
  const hdr = new Map<string, string>();
  const headers: string[] = [];
  for (const line of lines.slice(1)) {
    const i = line.indexOf(":");
    if (i <= 0) continue;
    const raw = line.slice(0, i).trim().toLowerCase();
    const name = HEADER_SHORT[raw] ?? raw;
    if (!hdr.has(name)) hdr.set(name, line.slice(i + 1).trim());
    headers.push(line);
  }
  const cseq = /^(\d+)\s+([A-Z]+)/.exec(hdr.get("cseq") ?? "");
  const callId = hdr.get("call-id");
  if (!cseq || !callId) return null;
  const tag = (h: string | undefined) => /;\s*tag=([^;>\s]+)/i.exec(h ?? "")?.[1] ?? "";
  const code = resp ? Number(resp[1]) : null;
  const rseq = /^\d+$/.test(hdr.get("rseq") ?? "") ? Number(hdr.get("rseq")) : null;
  return {
    label: resp ? `${resp[1]} ${resp[2]}`.trim() : req![1]!,
    method: req ? req[1]! : null,
    code,
    src,
    dst,
    callId,
    fromTag: tag(hdr.get("from")),
    toTag: tag(hdr.get("to")),
    cseqNum: Number(cseq[1]),
    cseqMethod: cseq[2]!,
    rseq: code !== null && code > 100 && code < 200 ? rseq : null,
    headers,
  };
}

/** What the player must name after a step, and why. */
export interface NextRule {
  /** Matches the captured message that answers the question. */
  answer: string;
  matches(s: FlowStep): boolean;
  why: string;
}

const isFinalInvite = (s: FlowStep) => s.code !== null && s.cseqMethod === "INVITE" && s.code >= 200;

/**
 * The message that must follow `step` (RFC 3261 and RFC 3262), or null when the protocol leaves
 * the next message open (a 180 may be followed by a 200 or a 486, an INVITE by a 100 or not).
 */
export function nextRule(step: FlowStep): NextRule | null {
  const { code, method } = step;
  if (code !== null && step.cseqMethod === "INVITE" && code >= 200 && code < 300)
    return {
      answer: "ACK",
      matches: (s) => s.method === "ACK" && s.cseqNum === step.cseqNum,
      why: "RFC 3261 §13.2.2.4: the UAC acknowledges every 2xx to an INVITE with an ACK, a new transaction sent end to end in the dialog, carrying the INVITE's CSeq number.",
    };
  if (code !== null && isFinalInvite(step) && code >= 300)
    return {
      answer: "ACK",
      matches: (s) => s.method === "ACK" && s.cseqNum === step.cseqNum,
      why: `RFC 3261 §17.1.1.3: a ${code} ends the INVITE client transaction, which sends the ACK itself (same branch, same CSeq number) hop by hop.`,
    };
  if (code !== null && code > 100 && code < 200 && step.cseqMethod === "INVITE" && step.rseq !== null)
    return {
      answer: "PRACK",
      matches: (s) => s.method === "PRACK",
      why: "RFC 3262 §4: a reliable provisional response (Require: 100rel, RSeq) is acknowledged with a PRACK whose RAck names its RSeq and CSeq; the UAS retransmits the 18x until the PRACK arrives.",
    };
  if (method === "BYE" || method === "PRACK" || method === "UPDATE" || method === "INFO")
    return {
      answer: `200 OK (${method})`,
      matches: (s) => s.code !== null && s.code >= 200 && s.cseqMethod === method,
      why:
        method === "BYE"
          ? "RFC 3261 §15.1.2: the UAS answers a BYE with a 2xx and ends the dialog; a BYE is never rejected for being in a confirmed dialog."
          : `RFC 3261 §17.2.2: a non-INVITE request gets one final response from the server transaction (here 200 OK with CSeq method ${method}).`,
    };
  if (method === "CANCEL")
    return {
      answer: "200 OK (CANCEL)",
      matches: (s) => s.code !== null && s.code >= 200 && s.cseqMethod === "CANCEL",
      why: "RFC 3261 §9.2: the UAS answers the CANCEL itself with 200 OK (same CSeq number, method CANCEL), then ends the pending INVITE with 487 Request Terminated.",
    };
  if (code !== null && code >= 200 && code < 300 && step.cseqMethod === "CANCEL")
    return {
      answer: "487 Request Terminated",
      matches: (s) => s.code === 487 && s.cseqMethod === "INVITE",
      why: "RFC 3261 §9.2: after answering the CANCEL, the UAS responds to the original INVITE with 487 (Request Terminated).",
    };
  if (method === "INVITE" && step.toTag === "")
    return {
      answer: "100 Trying",
      matches: (s) => s.code === 100 && s.cseqMethod === "INVITE",
      why: "RFC 3261 §8.2.6.1 and §16.2: a server that will not answer within 200 ms sends 100 Trying, so the client stops retransmitting the INVITE over UDP.",
    };
  return null;
}

/** Every answer the next-message question offers (the captured answer plus three others). */
export const NEXT_CHOICES = [
  "ACK",
  "PRACK",
  "100 Trying",
  "180 Ringing",
  "200 OK (BYE)",
  "200 OK (CANCEL)",
  "200 OK (PRACK)",
  "487 Request Terminated",
  "BYE",
  "CANCEL",
];

function sipMsg(
  first: string,
  p: { via: string; from: string; to: string; callId: string; cseq: string; extra?: string[] },
): string {
  return [
    first,
    `Via: SIP/2.0/UDP ${p.via}`,
    `From: ${p.from}`,
    `To: ${p.to}`,
    `Call-ID: ${p.callId}`,
    `CSeq: ${p.cseq}`,
    ...(p.extra ?? []),
    "Content-Length: 0",
    "",
    "",
  ].join("\r\n");
}

/** A textbook flow (RFC 3665 style) as captured payloads: `[payload, src, dst]`. */
export interface TextbookFlow {
  name: string;
  messages: Array<[string, string, string]>;
}

const A = "alice.atlanta.example.com";
const B = "bob.biloxi.example.com";

function textbook(
  name: string,
  callId: string,
  plan: Array<[string, "A" | "B", string, string, string?, string[]?]>,
): TextbookFlow {
  const from = `Alice <sip:alice@atlanta.example.com>;tag=9fxced76sl`;
  const messages = plan.map(([first, dir, cseq, branch, toTag, extra]): [string, string, string] => {
    const to = `Bob <sip:bob@biloxi.example.com>${toTag ? `;tag=${toTag}` : ""}`;
    const payload = sipMsg(first, {
      via: `${A}:5060;branch=${branch}`,
      from,
      to,
      callId,
      cseq,
      ...(extra ? { extra } : {}),
    });
    return dir === "A" ? [payload, A, B] : [payload, B, A];
  });
  return { name, messages };
}

const R = "sip:bob@biloxi.example.com SIP/2.0";
/** Built-in flows for playing offline: a call with a reliable 180, and a call cancelled while ringing. */
export const TEXTBOOK_FLOWS: readonly TextbookFlow[] = [
  textbook("Textbook: call with a reliable 180 (RFC 3262)", "3848276298220188511@atlanta.example.com", [
    [`INVITE ${R}`, "A", "1 INVITE", "z9hG4bK74bf9", undefined, ["Supported: 100rel"]],
    ["SIP/2.0 100 Trying", "B", "1 INVITE", "z9hG4bK74bf9"],
    ["SIP/2.0 180 Ringing", "B", "1 INVITE", "z9hG4bK74bf9", "8321234356", ["Require: 100rel", "RSeq: 1"]],
    [`PRACK ${R}`, "A", "2 PRACK", "z9hG4bK776asdhds", "8321234356", ["RAck: 1 1 INVITE"]],
    ["SIP/2.0 200 OK", "B", "2 PRACK", "z9hG4bK776asdhds", "8321234356"],
    ["SIP/2.0 200 OK", "B", "1 INVITE", "z9hG4bK74bf9", "8321234356"],
    [`ACK ${R}`, "A", "1 ACK", "z9hG4bK74bd5", "8321234356"],
    [`BYE ${R}`, "A", "3 BYE", "z9hG4bKnashds8", "8321234356"],
    ["SIP/2.0 200 OK", "B", "3 BYE", "z9hG4bKnashds8", "8321234356"],
  ]),
  textbook("Textbook: call cancelled while ringing", "a84b4c76e66710@atlanta.example.com", [
    [`INVITE ${R}`, "A", "314159 INVITE", "z9hG4bKnashds9"],
    ["SIP/2.0 100 Trying", "B", "314159 INVITE", "z9hG4bKnashds9"],
    ["SIP/2.0 180 Ringing", "B", "314159 INVITE", "z9hG4bKnashds9", "a6c85cf"],
    [`CANCEL ${R}`, "A", "314159 CANCEL", "z9hG4bKnashds9"],
    ["SIP/2.0 200 OK", "B", "314159 CANCEL", "z9hG4bKnashds9"],
    ["SIP/2.0 487 Request Terminated", "B", "314159 INVITE", "z9hG4bKnashds9", "a6c85cf"],
    [`ACK ${R}`, "A", "314159 ACK", "z9hG4bKnashds9", "a6c85cf"],
  ]),
];
