/**
 * Packet Defender widget (docs/GAMES.md "Packet Defender"): SIP and RTCP events of the live capture
 * (`/api/v4/stream/hep`, ui/src/lib/live-stream.ts) fly at the firewall; shoot the failures, let
 * healthy traffic through. Keys while the field has focus: ↑/↓ (or W/S) change lane, Space fires.
 * With the stream off the widget plays practice traffic and says so.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "../../lib/html.ts";
import { openLiveStream, type LiveConn } from "../../lib/live-stream.ts";
import type { WidgetProps } from "../../widgets/types.ts";
import { Defender, LANES, classify } from "./game.ts";

const W = 480;
const H = 270;
const PRACTICE: Array<[string, boolean]> = [
  ["INVITE", false],
  ["100 Trying", false],
  ["180 Ringing", false],
  ["200 OK", false],
  ["ACK", false],
  ["BYE", false],
  ["486 Busy Here", true],
  ["503 Service Unavailable", true],
  ["403 Forbidden", true],
  ["REGISTER", false],
  ["401 Unauthorized", true],
];
const CONN: Record<LiveConn["state"], string> = {
  checking: "checking the stream…",
  connecting: "connecting…",
  live: "live",
  retry: "reconnecting…",
  off: "off",
};

function draw(c: HTMLCanvasElement, g: Defender): void {
  const x = c.getContext("2d");
  if (!x) return;
  const lh = H / LANES;
  x.fillStyle = "#0d1620";
  x.fillRect(0, 0, W, H);
  x.strokeStyle = "#1d2b3a";
  for (let i = 1; i < LANES; i++) x.strokeRect(0, i * lh, W, 0);
  x.fillStyle = g.over ? "#7a2020" : "#2f6fdb";
  x.fillRect(0, 0, 8, H);
  x.fillStyle = "#e8eef5";
  x.beginPath();
  x.moveTo(12, g.lane * lh + 8);
  x.lineTo(32, g.lane * lh + lh / 2);
  x.lineTo(12, g.lane * lh + lh - 8);
  x.fill();
  x.fillStyle = "#ffd54a";
  for (const s of g.shots) x.fillRect(s.x * W, s.lane * lh + lh / 2 - 2, 10, 4);
  x.font = "11px system-ui, sans-serif";
  x.textBaseline = "middle";
  for (const p of g.packets) {
    const px = p.x * W;
    const w = Math.min(140, x.measureText(p.label).width + 12);
    x.fillStyle = p.hostile ? "#c83a3a" : "#2e8b57";
    x.fillRect(px, p.lane * lh + 10, w, lh - 20);
    x.fillStyle = "#fff";
    x.fillText(p.label, px + 6, p.lane * lh + lh / 2, w - 10);
  }
}

export function PacketDefender(_props: WidgetProps) {
  const game = useRef(new Defender());
  const canvas = useRef<HTMLCanvasElement>(null);
  const [conn, setConn] = useState<LiveConn>({ state: "checking" });
  const [, setTick] = useState(0);
  const [focused, setFocused] = useState(false);
  const g = game.current;

  useEffect(
    () =>
      openLiveStream(() => "proto=1&proto=5", {
        state: setConn,
        gap: () => {},
        frame: (f) => {
          const c = classify(f);
          if (c) game.current.add(c.label, c.hostile);
        },
      }),
    [],
  );

  // Practice traffic while the stream is off.
  const practice = conn.state === "off";
  useEffect(() => {
    if (!practice || !focused) return;
    let i = 0;
    const t = setInterval(() => {
      const [label, hostile] = PRACTICE[i++ % PRACTICE.length]!;
      game.current.add(label, hostile);
    }, 1400);
    return () => clearInterval(t);
  }, [practice, focused]);

  // The game runs only while the field has focus: a dashboard left open does not lose on its own.
  const focusedRef = useRef(false);
  focusedRef.current = focused;
  useEffect(() => {
    let raf = 0;
    let last = performance.now();
    const frame = (now: number) => {
      if (focusedRef.current) game.current.step(Math.min(50, now - last));
      last = now;
      if (canvas.current) draw(canvas.current, game.current);
      raf = requestAnimationFrame(frame);
    };
    raf = requestAnimationFrame(frame);
    const t = setInterval(() => setTick((n) => n + 1), 250);
    return () => (cancelAnimationFrame(raf), clearInterval(t));
  }, []);

  const onKey = (e: KeyboardEvent) => {
    const k = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (k === "ArrowUp" || k === "w") game.current.moveLane(-1);
    else if (k === "ArrowDown" || k === "s") game.current.moveLane(1);
    else if (k === " ") game.current.fire();
    else return;
    e.preventDefault();
    setTick((n) => n + 1);
  };

  const dd = { margin: 0 };
  return html`<div style=${{ display: "flex", flexDirection: "column", gap: "6px", padding: "10px", height: "100%", minHeight: 0 }}>
    <p role="status" style=${{ margin: 0, fontSize: "13px" }}>Live capture: ${CONN[conn.state]}${practice ? ` (${conn.state === "off" ? conn.message : ""}) · practice traffic` : ""}</p>
    ${g.over && html`<p role="alert" class="alert alert-error" style=${{ margin: 0 }}>The firewall fell: ${g.breached} failures got through. Score ${g.score}. <button type="button" class="btn" onClick=${() => ((game.current = new Defender()), setTick((n) => n + 1))}>New game</button></p>`}
    <div style=${{ display: "flex", gap: "12px", flex: 1, minHeight: 0 }}>
      <div tabIndex=${0} role="group" aria-label="Packet Defender field: up and down change lane, space fires" onKeyDown=${onKey} onFocus=${() => setFocused(true)} onBlur=${() => setFocused(false)} style=${{ flex: 1, minWidth: 0, minHeight: 0, outlineOffset: "2px", position: "relative" }}>
        ${!focused && !g.over && html`<p style=${{ position: "absolute", inset: "40% 12px auto 12px", margin: 0, textAlign: "center", color: "#fff", background: "rgba(0,0,0,.6)", padding: "6px", borderRadius: "4px" }}>Paused: click the field to play</p>`}
        <canvas ref=${canvas} width=${W} height=${H} role="img" aria-label=${`Field: your lane ${g.lane + 1} of ${LANES}, ${g.packets.length} packets in flight`} style=${{ width: "100%", maxHeight: "100%", aspectRatio: `${W} / ${H}`, objectFit: "contain", border: "1px solid var(--line)" }}></canvas>
      </div>
      <div style=${{ fontSize: "13px", minWidth: "150px", display: "flex", flexDirection: "column", gap: "6px", overflow: "hidden" }}>
        <dl style=${{ margin: 0, display: "grid", gridTemplateColumns: "auto auto", gap: "2px 8px" }} aria-label="Game status">
          <dt>Score</dt><dd style=${dd}>${g.score}</dd>
          <dt>Lives</dt><dd style=${dd}>${g.lives}</dd>
          <dt>Lane</dt><dd style=${dd}>${g.lane + 1}</dd>
          <dt>Failures shot</dt><dd style=${dd}>${g.shotHostile}</dd>
          <dt>Healthy shot</dt><dd style=${dd}>${g.shotFriendly}</dd>
          <dt>Delivered</dt><dd style=${dd}>${g.delivered}</dd>
          <dt>Seen</dt><dd style=${dd}>${g.seen}</dd>
        </dl>
        <ul aria-label="Packets in flight" style=${{ margin: 0, paddingLeft: "16px", overflow: "auto" }}>
          ${g.packets.map((p) => html`<li key=${p.id}>${p.label} · lane ${p.lane + 1}${p.hostile ? " · failure" : ""}</li>`)}
        </ul>
      </div>
    </div>
    <p class="muted" style=${{ margin: 0, fontSize: "12px" }}>Click the field: ↑/↓ lane, Space fires. Shoot failures (4xx-6xx, red) before they reach the firewall; let healthy traffic (green) pass.</p>
  </div>`;
}
