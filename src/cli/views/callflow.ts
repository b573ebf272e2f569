import { hostText } from "../../core/index.ts";
import type { Row } from "../post-filter.ts";
import { printable } from "./columns.ts";
import { num, rowTimeUs } from "./row-time.ts";

/**
 * `--format callflow` (aliases flow, ladder; docs/CLI.md "Output formats"): a SIP ladder like sngrep's call flow.
 * One column per endpoint (ip:port, alias below when known) in order of first appearance, one
 * arrow per message in capture-time order (what tshark lists), labelled with the method or the
 * status line, a count line of messages and endpoints, and the Call-IDs.
 */
export interface FlowMessage {
  timeUs: number;
  from: number;
  to: number;
  label: string;
  callId: string;
}

export interface CallFlow {
  endpoints: Array<{ key: string; alias?: string }>;
  messages: FlowMessage[];
  callIds: string[];
}

const endpointKey = (ip: unknown, port: unknown): string => {
  const a = String(ip ?? "?");
  const p = num(port) ?? 0;
  const host = printable(hostText(a));
  return p > 0 ? `${host}:${p}` : host;
};

/** `INVITE (SDP)`, `200 OK`, `180 Ringing`; the status text from the payload's first line. */
export function messageLabel(row: Row): string {
  const payload = typeof row.payload === "string" ? row.payload : "";
  const firstLine = payload.slice(0, 256).split(/\r?\n/, 1)[0] ?? "";
  const status = /^SIP\/2\.0\s+(\d{3})\s*(.*)$/i.exec(firstLine);
  const code = num(row.response_code);
  let label: string;
  if (status) label = `${status[1]} ${status[2]!.trim()}`.trim();
  else if (code !== undefined && code > 0) label = `${code}${row.cseq_method ? ` ${String(row.cseq_method)}` : ""}`;
  else {
    const reqMethod = /^([A-Z]+)\s+\S+\s+SIP\/2\.0/.exec(firstLine)?.[1];
    label = String(row.method ?? reqMethod ?? row.event ?? "?");
  }
  const sdp = /\r?\n\r?\nv=0/.test(payload) || /^content-type:\s*application\/sdp/im.test(payload);
  return printable(sdp ? `${label} (SDP)` : label);
}

/** Messages in capture order: time ascending, ties by uuid (UUIDv7, assigned in arrival order). */
export function buildCallFlow(rows: readonly Row[]): CallFlow {
  const sorted = rows
    .map((r, i) => ({ r, i, t: rowTimeUs(r) ?? 0 }))
    .sort((a, b) => a.t - b.t || String(a.r.uuid ?? "").localeCompare(String(b.r.uuid ?? "")) || b.i - a.i);
  const endpoints: CallFlow["endpoints"] = [];
  const index = new Map<string, number>();
  const callIds: string[] = [];
  const endpoint = (ip: unknown, port: unknown, alias: unknown): number => {
    const key = endpointKey(ip, port);
    let i = index.get(key);
    if (i === undefined) {
      i = endpoints.length;
      index.set(key, i);
      endpoints.push(typeof alias === "string" && alias !== "" ? { key, alias: printable(alias) } : { key });
    }
    return i;
  };
  const messages = sorted.map(({ r, t }) => {
    const callId = printable(String(r.session_id ?? r.sid ?? r.call_id ?? ""));
    if (callId !== "" && !callIds.includes(callId)) callIds.push(callId);
    return {
      timeUs: t,
      from: endpoint(r.src_ip, r.src_port, r.src_alias),
      to: endpoint(r.dst_ip, r.dst_port, r.dst_alias),
      label: messageLabel(r),
      callId,
    };
  });
  return { endpoints, messages, callIds };
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");
function clock(us: number, withDay: boolean): string {
  const d = new Date(Math.floor(us / 1000));
  const t = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(((us % 1_000_000) + 1_000_000) % 1_000_000, 6)}`;
  return withDay ? `${d.toISOString().slice(0, 10)} ${t}` : t;
}

export function renderCallFlow(flow: CallFlow): string[] {
  const { endpoints, messages, callIds } = flow;
  const tagged = callIds.length > 1;
  const labels = messages.map((m) => (tagged ? `${m.label} [${callIds.indexOf(m.callId) + 1}]` : m.label));
  const first = messages[0];
  const last = messages.at(-1);
  const withDay = !!first && !!last && clock(first.timeUs, true).slice(0, 10) !== clock(last.timeUs, true).slice(0, 10);
  const timeW = first ? clock(first.timeUs, withDay).length : 15;
  const colW = Math.max(
    18,
    ...endpoints.map((e) => Math.max(e.key.length, e.alias?.length ?? 0) + 2),
    ...labels.map((l) => l.length + 8),
  );
  const center = (i: number) => timeW + 2 + Math.floor(colW / 2) + i * colW;
  const lineW = center(Math.max(0, endpoints.length - 1)) + colW;
  const blank = () => Array.from({ length: lineW }, () => " ");
  const put = (buf: string[], at: number, text: string) => [...text].forEach((ch, k) => (buf[at + k] = ch));
  const centred = (buf: string[], mid: number, text: string) =>
    put(buf, Math.max(0, mid - Math.floor(text.length / 2)), text);
  const finish = (buf: string[]) => buf.join("").trimEnd();
  const lifelines = () => {
    const b = blank();
    endpoints.forEach((_e, i) => (b[center(i)] = "│"));
    return b;
  };

  const out: string[] = [
    `Call flow (UTC${first && !withDay ? `, ${clock(first.timeUs, true).slice(0, 10)}` : ""})`,
    "",
  ];
  const head = blank();
  endpoints.forEach((e, i) => centred(head, center(i), e.key));
  out.push(finish(head));
  if (endpoints.some((e) => e.alias)) {
    const aliases = blank();
    endpoints.forEach((e, i) => e.alias && centred(aliases, center(i), `(${e.alias})`));
    out.push(finish(aliases));
  }
  out.push(finish(lifelines()));
  messages.forEach((m, k) => {
    const b = lifelines();
    put(b, 0, clock(m.timeUs, withDay));
    const label = ` ${labels[k]} `;
    if (m.from === m.to) {
      const x = center(m.from);
      put(b, x + 1, `──┐${label}`);
      out.push(finish(b));
      const back = lifelines();
      put(back, x + 1, "<─┘");
      out.push(finish(back));
      return;
    }
    const lo = Math.min(center(m.from), center(m.to));
    const hi = Math.max(center(m.from), center(m.to));
    for (let x = lo + 1; x < hi; x++) b[x] = "─";
    if (m.from < m.to) b[hi - 1] = ">";
    else b[lo + 1] = "<";
    centred(b, Math.floor((lo + hi) / 2), label);
    out.push(finish(b));
  });
  out.push(finish(lifelines()), "");
  out.push(`${messages.length} messages, ${endpoints.length} endpoints`);
  out.push(
    `Call-IDs: ${callIds.length ? callIds.map((c, i) => (tagged ? `[${i + 1}] ${c}` : c)).join(", ") : "(none)"}`,
  );
  return out;
}
