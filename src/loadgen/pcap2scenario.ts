/**
 * `loadgen pcap2scenario` (docs/LOADGEN.md "pcap2scenario"): one call of a capture becomes a sipp
 * XML scenario for one side of it. What that side sent becomes `<send>` templates with the
 * addresses, Call-ID, branches, tags and lengths turned into keywords, so the scenario runs against
 * another peer; what it received becomes `<recv>` (provisional answers optional). Retransmissions in
 * the capture (the same first line, CSeq and branch in the same direction) are dropped.
 */
import { extractSipMessages, type CapturedSip } from "../pcap/index.ts";
import { LoadgenUsageError } from "./options.ts";
import { branchOf, cseqOf, header, parseSipWire, tagOf, type SipWireMessage } from "./sip-wire.ts";

export interface Pcap2ScenarioOptions {
  /** The call to take; default: the Call-ID of the first INVITE (else of the first message). */
  callId?: string;
  /** Which side the scenario plays: `uac` the sender of the call's first message, `uas` its receiver. */
  role: "uac" | "uas";
}

interface Leg {
  msg: SipWireMessage;
  fromLocal: boolean;
}

const endpoint = (ip: string, port: number) => `${ip}:${port}`;

export function pcap2scenario(bytes: Uint8Array, opts: Pcap2ScenarioOptions): string {
  const { messages, error } = extractSipMessages(bytes);
  if (messages.length === 0)
    throw new LoadgenUsageError(`no SIP messages in the capture${error ? ` (${error.reason})` : ""}`);
  const parsed = messages
    .map((m) => ({ cap: m, msg: parseSipWire(new TextDecoder().decode(m.payload)) }))
    .filter((x): x is { cap: CapturedSip; msg: SipWireMessage } => x.msg !== null);
  const callId = opts.callId ?? header((parsed.find((p) => p.msg.method === "INVITE") ?? parsed[0])!.msg, "call-id");
  const call = parsed.filter((p) => header(p.msg, "call-id") === callId);
  if (call.length === 0) throw new LoadgenUsageError(`no message with Call-ID ${callId} in the capture`);
  const first = call[0]!.cap;
  const uacSide = endpoint(first.srcIp, first.srcPort);
  const seen = new Set<string>();
  const legs: Leg[] = [];
  for (const { cap, msg } of call) {
    const fromUac = endpoint(cap.srcIp, cap.srcPort) === uacSide;
    const key = `${fromUac} ${msg.method || msg.status} ${header(msg, "cseq")} ${branchOf(header(msg, "via"))}`;
    if (seen.has(key)) continue;
    seen.add(key);
    legs.push({ msg, fromLocal: opts.role === "uac" ? fromUac : !fromUac });
  }
  if (opts.role === "uas" && legs[0]!.fromLocal)
    throw new LoadgenUsageError("the call's first message comes from the uas side; use -role uac");
  // The uac's tag is in From of the first request, the uas's in To of its first tagged answer.
  const uasAnswer = legs.find((l) => !l.msg.method && tagOf(header(l.msg, "to")))?.msg;
  const uacTag = tagOf(header(legs[0]!.msg, "from"));
  const uasTag = uasAnswer ? tagOf(header(uasAnswer, "to")) : "";
  const [localTag, remoteTag] = opts.role === "uac" ? [uacTag, uasTag] : [uasTag, uacTag];
  const out = [
    `<?xml version="1.0" encoding="UTF-8" ?>`,
    `<!-- made by loadgen pcap2scenario from Call-ID ${escapeXml(callId)} (${opts.role}) -->`,
    `<scenario name="${escapeXml(`pcap ${opts.role}`)}">`,
  ];
  let requestHadToTag = false;
  for (const l of legs) {
    if (l.msg.method && !l.fromLocal) requestHadToTag = tagOf(header(l.msg, "to")) !== "";
    if (!l.fromLocal) {
      const optional = !l.msg.method && l.msg.status < 200 ? ` optional="true"` : "";
      out.push(
        l.msg.method ? `  <recv request="${l.msg.method}"/>` : `  <recv response="${l.msg.status}"${optional}/>`,
      );
      continue;
    }
    const retrans =
      l.msg.method && l.msg.method !== "ACK"
        ? ` retrans="500"`
        : l.msg.status >= 200 && cseqOf(l.msg).method === "INVITE"
          ? ` retrans="500"`
          : "";
    out.push(
      `  <send${retrans}><![CDATA[`,
      ...template(l.msg, localTag, remoteTag, requestHadToTag).map((line) => `    ${line}`),
      `  ]]></send>`,
    );
  }
  out.push("</scenario>", "");
  return out.join("\n");
}

/** A tag unique per call of the replay. */
const LOCAL_TAG = "[pid]-lg-[call_number]";

const escapeXml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;");

/** The message as a template: the side-specific values become keywords. */
function template(msg: SipWireMessage, localTag: string, remoteTag: string, requestHadToTag: boolean): string[] {
  const lines: string[] = [];
  if (msg.method) {
    const user = /^sips?:([^@;>]+)@/.exec(msg.uri)?.[1];
    lines.push(`${msg.method} sip:${user ? `${user}@` : ""}[remote_ip]:[remote_port] SIP/2.0`);
  } else lines.push(`SIP/2.0 ${msg.status} ${msg.reason}`);
  const request = msg.method !== "";
  const done = new Set<string>();
  for (const [name, values] of msg.headers) {
    const Name = name
      .replace(/(^|-)([a-z])/g, (_m, d: string, c: string) => d + c.toUpperCase())
      .replace(/^Call-Id$/, "Call-ID")
      .replace(/^Cseq$/, "CSeq");
    if (done.has(name)) continue;
    done.add(name);
    switch (name) {
      case "via":
        lines.push(request ? "Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]" : "[last_Via:]");
        continue;
      case "call-id":
        lines.push(request ? "Call-ID: [call_id]" : "[last_Call-ID:]");
        continue;
      case "cseq":
        lines.push(request ? `CSeq: ${values[0]}` : "[last_CSeq:]");
        continue;
      case "from":
      case "to": {
        if (!request) {
          // A response copies From and To of its request; the uas adds its own tag to To.
          lines.push(
            name === "to" && !requestHadToTag && tagOf(values[0]!) ? `[last_To:];tag=${LOCAL_TAG}` : `[last_${Name}:]`,
          );
          continue;
        }
        const v = values[0]!
          .replace(remoteTag ? `;tag=${remoteTag}` : "\u0000", "[peer_tag_param]")
          .replace(localTag ? `;tag=${localTag}` : "\u0000", `;tag=${LOCAL_TAG}`)
          .replace(/@[^;>]+/, name === "from" ? "@[local_ip]:[local_port]" : "@[remote_ip]:[remote_port]");
        lines.push(`${Name}: ${v}`);
        continue;
      }
      case "contact":
        lines.push(`Contact: <sip:loadgen@[local_ip]:[local_port];transport=[transport]>`);
        continue;
      case "content-length":
        lines.push("Content-Length: [len]");
        continue;
      case "record-route":
      case "route":
        continue; // the proxies of the capture are not on the replay's path
      default:
        for (const v of values) lines.push(`${Name}: ${v}`);
    }
  }
  if (!done.has("content-length")) lines.push("Content-Length: [len]");
  const body = msg.body
    .replace(/^(o=\S+ \S+ \S+ IN IP)[46] \S+/m, "$1[local_ip_type] [local_ip]")
    .replace(/^c=IN IP[46] \S+/gm, "c=IN IP[media_ip_type] [media_ip]")
    .replace(/^(m=audio )\d+/m, "$1[media_port]");
  if (body.trim()) lines.push("", ...body.replace(/\r\n$/, "").split(/\r?\n/));
  return lines;
}
