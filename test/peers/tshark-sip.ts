/**
 * tshark's view of the SIP messages in a capture file: the independent ground truth that the
 * agent tests compare stored rows with. One entry per SIP PDU (a TCP frame may carry several);
 * addresses and ports from the innermost IP / transport header (IP-in-IP lists the outer first).
 */
type Json = string | number | boolean | null | Json[] | { [k: string]: Json };
type Layer = { [k: string]: Json };

export interface WireSip {
  frame: number;
  /** Frame time in integer microseconds (from the text, no floating point). */
  timestampUs: number;
  /** For a message reassembled from several TCP segments: the time of its first segment. */
  firstSegmentUs?: number;
  srcIp: string;
  dstIp: string;
  srcPort: number;
  dstPort: number;
  transport: "udp" | "tcp" | "sctp";
  method?: string;
  statusCode?: number;
  callId: string;
  fromUser?: string;
  toUser?: string;
  fromTag?: string;
  toTag?: string;
  cseqSeq?: number;
  cseqMethod?: string;
  /** User-Agent header, else Server. */
  userAgent?: string;
  requestUri?: string;
  /** Transport of the top Via ("UDP", "TCP", "WS", ...). */
  viaTransport?: string;
  /** To URI (the AOR of a REGISTER). */
  toUri?: string;
  /** First Contact: its URI and its expires parameter. */
  contactUri?: string;
  contactExpires?: number;
  /** Expires header. */
  expiresHeader?: number;
  /** The UDP or TCP payload as lowercase hex, when it is exactly this one message (no reassembly, no WebSocket). */
  payloadHex?: string;
}

/** "1120469572.844249000" → 1120469572844249 (µs), exact. */
export function epochToUs(epoch: string): number {
  const [sec = "0", frac = ""] = epoch.split(".");
  return Number(sec) * 1_000_000 + Number(frac.padEnd(6, "0").slice(0, 6));
}

const asList = (v: Json | undefined): Json[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const innermost = (v: Json | undefined): Layer | undefined => {
  const last = asList(v).at(-1);
  return last && typeof last === "object" && !Array.isArray(last) ? last : undefined;
};

/**
 * First occurrence of each wanted field anywhere in a SIP PDU's tree (so the first Contact, the top
 * Via), all of its values when tshark lists several; the body (sipfrag, SDP) is skipped.
 */
function collect(node: Json, wanted: Set<string>, out: Map<string, string[]>): void {
  if (node === null || typeof node !== "object") return;
  if (Array.isArray(node)) {
    for (const n of node) collect(n, wanted, out);
    return;
  }
  for (const [k, v] of Object.entries(node)) {
    if (k === "sip.msg_body") continue;
    if (wanted.has(k) && !out.has(k)) {
      const values = asList(v).filter((x): x is string | number => typeof x === "string" || typeof x === "number");
      if (values.length > 0) out.set(k, values.map(String));
    }
    if (typeof v === "object") collect(v, wanted, out);
  }
}

const SIP_FIELDS = [
  "sip.Method",
  "sip.Status-Code",
  "sip.Call-ID",
  "sip.from.user",
  "sip.to.user",
  "sip.from.tag",
  "sip.to.tag",
  "sip.CSeq.seq",
  "sip.CSeq.method",
  "sip.User-Agent",
  "sip.Server",
  "sip.r-uri",
  "sip.Via.transport",
  "sip.to.addr",
  "sip.contact.uri",
  "sip.contact.parameter",
  "sip.Expires",
] as const;

/** frame.number → frame time (µs) for every frame of the file. */
function allFrameTimes(path: string): Map<number, number> {
  const r = Bun.spawnSync(
    ["tshark", "-n", "-r", path, "-T", "fields", "-e", "frame.number", "-e", "frame.time_epoch"],
    { stdout: "pipe", stderr: "pipe" },
  );
  if (r.exitCode !== 0) throw new Error(`tshark -r ${path} failed (${r.exitCode}): ${r.stderr.toString()}`);
  const times = new Map<number, number>();
  for (const line of r.stdout.toString().split("\n")) {
    const [n, t] = line.split("\t");
    if (n && t) times.set(Number(n), epochToUs(t));
  }
  return times;
}

/** Runs `tshark -r <path> -Y <filter> -T json` and flattens every SIP PDU. */
export function sipGroundTruth(path: string, displayFilter = "sip"): WireSip[] {
  const r = Bun.spawnSync(
    [
      "tshark",
      "-n",
      "-r",
      path,
      "-Y",
      displayFilter,
      "-T",
      "json",
      "--no-duplicate-keys",
      "-J",
      "frame ip ipv6 udp tcp tcp.segments websocket sctp sip",
    ],
    {
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  if (r.exitCode !== 0) throw new Error(`tshark -r ${path} failed (${r.exitCode}): ${r.stderr.toString()}`);
  const packets = JSON.parse(r.stdout.toString() || "[]") as { _source: { layers: Layer } }[];
  const out: WireSip[] = [];
  let frameTimes: Map<number, number> | undefined;
  for (const p of packets) {
    const l = p._source.layers;
    const frame = innermost(l.frame) ?? {};
    // Layers keep the order of the stack, so the last IP layer named is the inner one (6in4 too).
    const ipLayer =
      Object.keys(l)
        .filter((k) => k === "ip" || k === "ipv6")
        .at(-1) ?? "ip";
    const ip = innermost(l[ipLayer]) ?? {};
    const v6 = ipLayer === "ipv6";
    const transport: WireSip["transport"] = l.udp ? "udp" : l.tcp ? "tcp" : "sctp";
    const t = innermost(l[transport]) ?? {};
    const segments = asList(innermost(l["tcp.segments"])?.["tcp.segment"]).map(Number);
    if (segments.length > 1) frameTimes ??= allFrameTimes(path);
    const firstSegmentUs =
      segments.length > 1 ? Math.min(...segments.map((n) => frameTimes?.get(n) ?? Infinity)) : undefined;
    const pdus = asList(l.sip).filter((s): s is Layer => typeof s === "object" && s !== null && !Array.isArray(s));
    for (const pdu of pdus) {
      const all = new Map<string, string[]>();
      collect(pdu, new Set(SIP_FIELDS), all);
      const f = { get: (k: string) => all.get(k)?.[0], has: (k: string) => all.has(k) };
      const num = (k: string) => (f.has(k) ? Number(f.get(k)) : undefined);
      const entry: WireSip = {
        frame: Number(frame["frame.number"]),
        timestampUs: epochToUs(String(frame["frame.time_epoch"])),
        srcIp: String(ip[v6 ? "ipv6.src" : "ip.src"]),
        dstIp: String(ip[v6 ? "ipv6.dst" : "ip.dst"]),
        srcPort: Number(t[`${transport}.srcport`]),
        dstPort: Number(t[`${transport}.dstport`]),
        transport,
        callId: f.get("sip.Call-ID") ?? "",
      };
      const set = <K extends keyof WireSip>(k: K, v: WireSip[K] | undefined) => {
        if (v !== undefined) entry[k] = v;
      };
      // Only the first PDU of the frame can start in an earlier segment.
      if (pdus.indexOf(pdu) === 0 && firstSegmentUs !== undefined && Number.isFinite(firstSegmentUs))
        entry.firstSegmentUs = firstSegmentUs;
      set("method", f.get("sip.Method"));
      set("statusCode", num("sip.Status-Code"));
      set("fromUser", f.get("sip.from.user"));
      set("toUser", f.get("sip.to.user"));
      set("fromTag", f.get("sip.from.tag"));
      set("toTag", f.get("sip.to.tag"));
      set("cseqSeq", num("sip.CSeq.seq"));
      set("cseqMethod", f.get("sip.CSeq.method"));
      // The appliance's user_agent is User-Agent, else Server (src/sip/types.ts, as HOMER does).
      set("userAgent", f.get("sip.User-Agent") ?? f.get("sip.Server"));
      set("requestUri", f.get("sip.r-uri"));
      set("viaTransport", f.get("sip.Via.transport"));
      set("toUri", f.get("sip.to.addr"));
      set("contactUri", f.get("sip.contact.uri"));
      const contactExpires = (all.get("sip.contact.parameter") ?? [])
        .map((p) => /^expires=(\d+)$/i.exec(p.trim())?.[1])
        .find((x) => x !== undefined);
      set("contactExpires", contactExpires === undefined ? undefined : Number(contactExpires));
      set("expiresHeader", num("sip.Expires"));
      // The exact bytes, where the frame's transport payload is this one message and nothing else.
      const udpPayload = t["udp.payload"];
      const tcpPayload = t["tcp.payload"];
      if (transport === "udp" && pdus.length === 1 && typeof udpPayload === "string")
        entry.payloadHex = udpPayload.replaceAll(":", "").toLowerCase();
      const plainTcp = transport === "tcp" && pdus.length === 1 && segments.length <= 1 && l.websocket === undefined;
      if (plainTcp && typeof tcpPayload === "string") entry.payloadHex = tcpPayload.replaceAll(":", "").toLowerCase();
      out.push(entry);
    }
  }
  return out;
}
