/**
 * SIPetris (docs/GAMES.md "SIPetris"): a single-player falling-blocks board whose pieces come from
 * the live capture (`/api/v4/stream/hep`, ui/src/lib/live-stream.ts): each SIP message seen turns
 * into the piece of its method or response class, and every failed response (4xx, 5xx, 6xx) pushes
 * a garbage row in. With the stream off or quiet the pieces come from a shuffled bag.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "../../lib/html.ts";
import { openLiveStream, type LiveConn, type LiveFrame } from "../../lib/live-stream.ts";
import type { WidgetProps } from "../../widgets/types.ts";
import { COLS, NetrisBoard, type Kind, type LockResult } from "../netris/engine.ts";
import { drawBoard } from "../netris/draw.ts";
import { boardKey } from "../netris/keys.ts";

const METHOD_PIECE: Record<string, Kind> = {
  INVITE: "I",
  REGISTER: "O",
  BYE: "Z",
  ACK: "S",
  CANCEL: "L",
  OPTIONS: "J",
};
/** At most this many pieces wait in the queue (a bag is 7, plus 6 from SIP); messages beyond are shown, not queued. */
const MAX_QUEUE = 13;
const MAX_INCOMING = 4;

/** The piece (or garbage) a SIP message becomes; undefined for a frame that is not SIP. */
export function pieceOf(f: LiveFrame): { kind: Kind; label: string } | { garbage: true; label: string } | undefined {
  const s = f.sip;
  if (!s) return undefined;
  const code = Number(s.resp_code);
  if (s.method && !code) return { kind: METHOD_PIECE[s.method] ?? "T", label: s.method };
  if (code >= 400) return { garbage: true, label: `${code} ${s.resp_text}`.trim() };
  if (code >= 100) return { kind: code < 200 ? "T" : code < 300 ? "L" : "J", label: `${code} ${s.resp_text}`.trim() };
  return undefined;
}

const CONN: Record<LiveConn["state"], string> = {
  checking: "checking the stream…",
  connecting: "connecting…",
  live: "live",
  retry: "reconnecting…",
  off: "off",
};

export function Sipetris(_props: WidgetProps) {
  const board = useRef<NetrisBoard>(new NetrisBoard((Math.random() * 2 ** 32) >>> 0));
  const [, setTick] = useState(0);
  const [conn, setConn] = useState<LiveConn>({ state: "checking" });
  const [feed, setFeed] = useState<string[]>([]);
  const [fromStream, setFromStream] = useState(0);
  const canvas = useRef<HTMLCanvasElement>(null);
  const redraw = () => setTick((t) => t + 1);
  const b = board.current;

  useEffect(
    () =>
      openLiveStream(() => "proto=1", {
        state: setConn,
        gap: () => {},
        frame: (f) => {
          const p = pieceOf(f);
          const g = board.current;
          if (!p || g.over) return;
          if ("garbage" in p) {
            if (g.incoming.length < MAX_INCOMING) g.receive(1, Math.floor(Math.random() * COLS));
          } else if (g.queue.length < MAX_QUEUE) {
            g.queue.splice(1, 0, p.kind);
            setFromStream((n) => n + 1);
          }
          setFeed((l) => [`${p.label} → ${"garbage" in p ? "garbage row" : p.kind}`, ...l].slice(0, 5));
          redraw();
        },
      }),
    [],
  );

  // Gravity only while the board has focus: a dashboard left open does not play on its own.
  const [focused, setFocused] = useState(false);
  const level = Math.floor(b.lines / 10);
  useEffect(() => {
    if (b.over || !focused) return;
    const t = setInterval(
      () => {
        board.current.step();
        redraw();
      },
      Math.max(120, 800 - level * 70),
    );
    return () => clearInterval(t);
  }, [b, b.over, level, focused]);

  useEffect(() => {
    if (canvas.current) drawBoard(canvas.current, b);
  });

  const onKey = (e: KeyboardEvent) => {
    const r: { lock: LockResult | undefined } | undefined = boardKey(e, b);
    if (r) redraw();
  };
  const restart = () => {
    board.current = new NetrisBoard((Math.random() * 2 ** 32) >>> 0);
    setFromStream(0);
    redraw();
  };

  const dd = { margin: 0 };
  return html`<div style=${{ display: "flex", gap: "12px", padding: "10px", height: "100%", minHeight: 0 }}>
    <div tabIndex=${0} role="group" aria-label="SIPetris board: arrows move, up rotates, space drops" onKeyDown=${onKey} onFocus=${() => setFocused(true)} onBlur=${() => setFocused(false)} style=${{ height: "100%", minHeight: 0, outlineOffset: "2px", position: "relative" }}>
      ${!focused && !b.over && html`<p style=${{ position: "absolute", inset: "40% 8px auto 8px", margin: 0, textAlign: "center", color: "#fff", background: "rgba(0,0,0,.6)", padding: "6px", borderRadius: "4px" }}>Paused: click the board to play</p>`}
      <canvas ref=${canvas} width=${200} height=${400} role="img" aria-label=${`SIPetris board: ${b.pieces} pieces, ${b.lines} lines`} style=${{ height: "min(100%, 400px)", aspectRatio: "1 / 2", background: "#101820", border: "1px solid var(--line)" }}></canvas>
    </div>
    <div style=${{ display: "flex", flexDirection: "column", gap: "6px", fontSize: "13px", minWidth: 0, flex: 1 }}>
      <p style=${{ margin: 0 }} role="status">Live capture: ${CONN[conn.state]}${conn.state === "off" ? ` (${conn.message}) · pieces from a shuffled bag` : ""}</p>
      ${b.over && html`<p class="alert alert-error" role="alert" style=${{ margin: 0 }}>Game over after ${b.lines} lines. <button type="button" class="btn" onClick=${restart}>New game</button></p>`}
      <dl style=${{ margin: 0, display: "grid", gridTemplateColumns: "auto 1fr", gap: "2px 8px" }} aria-label="Game status">
        <dt>Pieces</dt><dd style=${dd}>${b.pieces}</dd>
        <dt>Lines</dt><dd style=${dd}>${b.lines}</dd>
        <dt>From SIP</dt><dd style=${dd}>${fromStream}</dd>
        <dt>Garbage</dt><dd style=${dd}>${b.garbageReceived}</dd>
        <dt>Next</dt><dd style=${dd}>${b.next()}</dd>
      </dl>
      <ul aria-label="Latest SIP messages" style=${{ margin: 0, paddingLeft: "16px", overflow: "hidden" }}>
        ${feed.map((f, i) => html`<li key=${i} style=${{ whiteSpace: "nowrap", overflow: "hidden", textOverflow: "ellipsis" }} title=${f}>${f}</li>`)}
      </ul>
      <p class="muted" style=${{ margin: 0, fontSize: "12px" }}>INVITE I, REGISTER O, BYE Z, ACK S, CANCEL L, OPTIONS J, other T; 1xx T, 2xx L, 3xx J; 4xx-6xx push a garbage row.</p>
    </div>
  </div>`;
}
