/**
 * Live mode of the results widget (docs/STREAM.md "In the dashboard"): new messages of the searched HEP
 * protocol stream in from `/api/v4/stream/hep` (the browser sends its session cookie on the
 * handshake), newest first, at most MAX_ROWS kept. Pause holds new messages back (counted) until
 * Resume. The search form's filters apply (lib/live-filter.ts): method and Call-ID on the server,
 * users, addresses and status here; the bar names what is applied and what is not. A lost connection is tried again after 1 s doubling up to 30 s with jitter
 * (lib/live-stream.ts), and the gap is shown as a row: messages in it are not shown. A click on a
 * SIP row opens its call.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { eventClass, formatTime, hostLabel } from "../lib/format.ts";
import { html } from "../lib/html.ts";
import { liveFilter } from "../lib/live-filter.ts";
import { openLiveStream, type LiveConn, type LiveFrame } from "../lib/live-stream.ts";
import { openTransaction } from "../lib/state.ts";
import { protoLabel } from "../../../src/core/protocols.ts";

/** Rows kept in memory (and in the table); older ones are dropped and counted. */
export const MAX_ROWS = 500;
/** New messages are drawn at most this often (one render per batch, not per message). */
const FLUSH_MS = 200;

type Row = { kind: "event"; key: number; f: LiveFrame } | { kind: "gap"; key: number; from: number; to: number };

function what(f: LiveFrame): { text: string; cls: string } {
  const s = f.sip;
  if (!s) return { text: protoLabel(f.proto), cls: "ev-other" };
  return s.resp_code
    ? { text: `${s.resp_code} ${s.resp_text}`.trim(), cls: eventClass(s.resp_code) }
    : { text: s.method, cls: eventClass(s.method) };
}

/** Field names of the search form for the live view's note. */
const KEY_NAMES: Record<string, string> = {
  user_agent: "User-Agent",
  payload: "payload",
  node: "node",
  node_id: "node",
  node_name: "node name",
  capture_id: "capture ID",
  ruri_user: "R-URI user",
};
const keyName = (k: string) => KEY_NAMES[k] ?? k.replace(/_/g, " ");

export function LiveResults({
  protoType,
  filter,
  onStop,
}: {
  protoType: number;
  filter?: Readonly<Record<string, unknown>>;
  onStop: () => void;
}) {
  // The form's filters as a stable key: a new search restarts the stream with its filters.
  const filterKey = JSON.stringify(filter ?? {});
  const live = useMemo(
    () => liveFilter(protoType, JSON.parse(filterKey) as Record<string, unknown>),
    [protoType, filterKey],
  );
  const [rows, setRows] = useState<Row[]>([]);
  const [conn, setConn] = useState<LiveConn>({ state: "checking" });
  const [paused, setPaused] = useState(false);
  const [held, setHeld] = useState(0);
  const [dropped, setDropped] = useState(0);
  const incoming = useRef<Row[]>([]);
  const pausedRef = useRef(false);
  const nextKey = useRef(1);

  useEffect(() => {
    const flush = setInterval(() => {
      if (pausedRef.current || incoming.current.length === 0) return;
      const add = incoming.current.reverse();
      incoming.current = [];
      setRows((old) => {
        const all = [...add, ...old];
        if (all.length > MAX_ROWS) setDropped((d) => d + all.length - MAX_ROWS);
        return all.slice(0, MAX_ROWS);
      });
      setHeld(0);
    }, FLUSH_MS);
    const stop = openLiveStream(() => live.query, {
      state: setConn,
      gap: (from, to) => incoming.current.push({ kind: "gap", key: nextKey.current++, from, to }),
      frame: (f) => {
        if (!live.match(f)) return;
        const q = incoming.current;
        q.push({ kind: "event", key: nextKey.current++, f });
        // Held back while paused: only the newest MAX_ROWS can be shown later.
        if (q.length > MAX_ROWS) setDropped((d) => d + q.splice(0, q.length - MAX_ROWS).length);
        if (pausedRef.current) setHeld(q.length);
      },
    });
    return () => {
      clearInterval(flush);
      stop();
    };
  }, [live]);

  const togglePause = () => {
    pausedRef.current = !paused;
    setPaused(!paused);
  };
  const open = (f: LiveFrame) => {
    if (!f.sip?.callid) return;
    openTransaction.set({
      sessionIds: [f.sip.callid],
      protoType: 1,
      eventType: f.sip.method.toUpperCase() === "REGISTER" ? "registration" : "call",
      from: f.ts - 10 * 60_000,
      to: Date.now() + 60_000,
      title: f.sip.callid,
    });
  };

  const shown = rows.filter((r) => r.kind === "event").length;
  let status: string;
  if (conn.state === "checking" || conn.state === "connecting") status = "Connecting…";
  else if (conn.state === "retry") status = `Reconnecting at ${formatTime(conn.at, false)}: ${conn.reason}`;
  else if (conn.state === "off") status = "Live stream unavailable";
  else status = paused ? `Paused · ${held} new` : `Live · ${shown} message${shown === 1 ? "" : "s"}`;

  let body;
  if (conn.state === "off") body = html`<p class="alert alert-error" role="alert">${conn.message}</p>`;
  else if (rows.length === 0)
    body = html`<div class="empty"><p>${conn.state === "live" ? `Waiting for new ${protoLabel(protoType)} messages…` : "Connecting to the live stream…"}</p></div>`;
  else
    body = html`<div class="table-wrap">
      <table class="grid-table" aria-label="Live messages">
        <thead>
          <tr>
            ${["Time", "Event", "From", "To", "Source", "Destination", "Call-ID"].map((t) => html`<th key=${t} scope="col">${t}</th>`)}
          </tr>
        </thead>
        <tbody>
          ${rows.map((r) => {
            if (r.kind === "gap")
              return html`<tr key=${r.key} class="muted"><td colspan="7" role="note">Connection lost from ${formatTime(r.from)} to ${formatTime(r.to)}: messages in between are not shown here (search for them).</td></tr>`;
            const f = r.f;
            const w = what(f);
            return html`<tr key=${r.key} tabindex="0" aria-label=${f.sip ? `Open call ${f.sip.callid}` : `${w.text} from ${f.src_ip}`} onClick=${() => open(f)} onKeyDown=${(e: KeyboardEvent) => (e.key === "Enter" || e.key === " ") && ((e.preventDefault(), open(f)))}>
              <td class="mono">${formatTime(f.ts)}</td>
              <td><span class=${`ev ${w.cls}`}>${w.text}</span></td>
              <td>${f.sip?.from_user ?? ""}</td>
              <td>${f.sip?.to_user ?? ""}</td>
              <td class="mono">${hostLabel(f.src_ip, f.src_port, undefined)}</td>
              <td class="mono">${hostLabel(f.dst_ip, f.dst_port, undefined)}</td>
              <td class="mono">${f.sip?.callid ?? ""}</td>
            </tr>`;
          })}
        </tbody>
      </table>
    </div>`;

  return html`<div class="results" aria-busy=${conn.state === "checking" || conn.state === "connecting"}>
    <div class="results-bar">
      <span class="count" role="status">${status}</span>
      <span class="muted small" role="note" aria-label="Live filters"
        >${protoLabel(protoType)} as it arrives${live.applied.length ? `, filtered by ${live.applied.join(" · ")}` : ", unfiltered"}${
          live.notApplied.length ? `; not applied live: ${[...new Set(live.notApplied.map(keyName))].join(", ")}` : ""
        }${dropped > 0 ? ` · ${dropped} older message${dropped === 1 ? "" : "s"} dropped (newest ${MAX_ROWS} kept)` : ""}</span
      >
      <span class="spacer"></span>
      <button type="button" class=${paused ? "btn" : "btn btn-ghost"} aria-pressed=${paused} onClick=${togglePause} disabled=${conn.state === "off"}>${paused ? "Resume" : "Pause"}</button>
      <button type="button" class="btn btn-ghost" onClick=${() => (setRows([]), setDropped(0))} disabled=${rows.length === 0}>Clear</button>
      <button type="button" class="btn btn-primary" aria-pressed="true" title="Back to the search results" onClick=${onStop}>Live</button>
    </div>
    ${body}
  </div>`;
}
