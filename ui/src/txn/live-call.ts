/**
 * The call view's live ladder (docs/CALL-VIEW.md "Live"): while on, the call's SIP messages stream
 * in from `/api/v4/stream/hep?proto=1&callid=…` (every Call-ID of the call, its correlated legs
 * too) and are added to the ladder as they arrive. On each (re)connect the stream first replays
 * what its ring still holds of the call (`history`), so messages newer than the lake's answer are
 * not missed; a message the window already shows is recognised (same time to the millisecond,
 * addresses, ports and event) and left out. Reconnects and the gap they leave come from
 * lib/live-stream.ts, as in the results widget's Live mode.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { formatTime, hostLabel } from "../lib/format.ts";
import { html } from "../lib/html.ts";
import { openLiveStream, type LiveConn, type LiveFrame } from "../lib/live-stream.ts";
import type { TxMessage } from "../lib/transaction.ts";

/** Call-IDs one stream filter takes at most (src/stream/filter.ts MAX_CALLIDS). */
const MAX_CALLIDS = 32;
/** Buffered messages of the call asked for on each connect (the coordinator caps it at history_limit). */
const HISTORY = 200;
/** Live messages the ladder takes; then Live stops and says so (reopen the call to see them all). */
export const MAX_LIVE = 1000;

export interface LiveGap {
  from: number;
  to: number;
}

export interface LiveLadder {
  on: boolean;
  toggle(): void;
  /** Messages received live and not already shown, oldest first. */
  items: TxMessage[];
  /** The connection while on. */
  conn: LiveConn | undefined;
  gaps: LiveGap[];
  /** Live stopped at MAX_LIVE messages. */
  full: boolean;
}

/** What makes two rows the same message here: a live frame carries no row id. */
const sameMessageKey = (m: TxMessage) =>
  `${Math.floor(m.timestamp_us / 1000)}|${m.src_ip}|${m.src_port ?? ""}|${m.dst_ip}|${m.dst_port ?? ""}|${m.event.toUpperCase()}`;

/** A SIP frame as a row of the call (no lake uuid: `live-N`); undefined for other frames. */
export function liveMessage(f: LiveFrame, n: number): TxMessage | undefined {
  const s = f.sip;
  if (!s) return undefined;
  const response = s.resp_code !== "";
  return {
    uuid: `live-${n}`,
    live: true,
    timestamp_us: f.ts * 1000,
    session_id: s.callid,
    src_ip: f.src_ip ?? "",
    dst_ip: f.dst_ip ?? "",
    src_port: f.src_port ?? null,
    dst_port: f.dst_port ?? null,
    event: response ? s.resp_code : s.method.toUpperCase(),
    label: response ? `${s.resp_code} ${s.resp_text}`.trim() : s.method.toUpperCase(),
    method: response ? null : s.method,
    response_code: response ? Number(s.resp_code) : null,
    cseq_method: s.cseq.split(/\s+/)[1] ?? s.method,
    payload: f.payload !== undefined && f.payload_encoding !== "base64" ? f.payload : null,
    caller: s.from_user,
    callee: s.to_user,
    proto_type: 1,
    node_id: f.node_id ?? null,
  };
}

/** The live state of an open call; `loaded` is the lake's answer (null while it loads: Live waits for it). */
export function useLiveCall(callIds: readonly string[], loaded: readonly TxMessage[] | null): LiveLadder {
  const [on, setOn] = useState(false);
  const [items, setItems] = useState<TxMessage[]>([]);
  const [conn, setConn] = useState<LiveConn | undefined>();
  const [gaps, setGaps] = useState<LiveGap[]>([]);
  const [full, setFull] = useState(false);
  const seen = useRef(new Set<string>());
  const count = useRef(0);
  const ids = callIds.slice(0, MAX_CALLIDS);
  const idsKey = ids.join("\n");

  useEffect(() => {
    for (const m of loaded ?? []) seen.current.add(sameMessageKey(m));
  }, [loaded]);

  useEffect(() => {
    if (!on || !loaded) return;
    const query = () => {
      const q = new URLSearchParams({ proto: "1", include_payload: "1", history: String(HISTORY) });
      for (const c of ids) q.append("callid", c);
      return q.toString();
    };
    const stop = openLiveStream(query, {
      state: setConn,
      gap: (from, to) => setGaps((g) => [...g, { from, to }]),
      frame: (f) => {
        if (count.current >= MAX_LIVE) return;
        const m = liveMessage(f, count.current + 1);
        if (!m) return;
        const k = sameMessageKey(m);
        if (seen.current.has(k)) return;
        seen.current.add(k);
        count.current++;
        setItems((old) => [...old, m]);
        if (count.current >= MAX_LIVE) {
          setFull(true);
          setOn(false);
        }
      },
    });
    return () => {
      stop();
      setConn(undefined);
    };
  }, [on, idsKey, loaded !== null]);

  return { on, toggle: () => setOn((v) => !v && count.current < MAX_LIVE), items, conn, gaps, full };
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The Live toggle, its state and the gaps after reconnects: a bar under the ladder's toolbar. */
export function LiveBar({ live }: { live: LiveLadder }) {
  const c = live.conn;
  const added = live.items.length;
  let text = "";
  if (live.full)
    text = `Live stopped: ${plural(MAX_LIVE, "message")} added, the most it takes (reopen the call to see every message)`;
  else if (!live.on)
    text = added > 0 ? `${plural(added, "message")} added live` : "Add the call's new messages as they arrive";
  else if (!c || c.state === "checking" || c.state === "connecting") text = "Connecting…";
  else if (c.state === "retry") text = `Reconnecting at ${formatTime(c.at, false)}: ${c.reason}`;
  else if (c.state === "live")
    text = added > 0 ? `Live · ${plural(added, "new message")}` : "Live · waiting for messages of this call";
  const off = live.on && c?.state === "off" ? c.message : undefined;
  return html`<div class="ladder-live">
      <button type="button" class=${live.on ? "btn btn-primary" : "btn"} aria-pressed=${live.on} onClick=${live.toggle} disabled=${live.full}>Live</button>
      ${off ? html`<span class="small alert-text" role="alert">${off}</span>` : html`<span class="muted small" role="status" aria-label="Live ladder">${text}</span>`}
    </div>
    ${
      live.gaps.length > 0 &&
      html`<ul class="live-gaps plain small">
      ${live.gaps.map(
        (g, i) =>
          html`<li key=${i} role="note">Connection lost from ${formatTime(g.from, false)} to ${formatTime(g.to, false)}: messages of that time the server no longer held may be missing (reopen the call to load them).</li>`,
      )}
    </ul>`
    }`;
}

/** A live message's pane: not in the lake yet, so no decoded view; the raw text when the stream sent it. */
export function LiveMessageDetail({ message, index }: { message: TxMessage; index: number }) {
  return html`<section class="msg-detail" aria-label=${`Message ${index + 1}`}>
    <header class="msg-head">
      <strong>#${index + 1}</strong>
      <span class="mono">${formatTime(message.timestamp_us / 1000)}</span>
      <span class="mono">${hostLabel(message.src_ip, message.src_port, undefined)} → ${hostLabel(message.dst_ip, message.dst_port, undefined)}</span>
      <span class="muted">received live</span>
    </header>
    <div class="decoded">
      <p class="muted">Received live and not stored yet: reopen the call to read it decoded.</p>
      ${!message.payload && html`<p class="muted">The stream sent no payload (it needs an administrator and coordinator.hep_stream.allow_payload).</p>`}
    </div>
    ${message.payload && html`<pre class="raw sip" aria-label="Raw message">${message.payload}</pre>`}
  </section>`;
}
