/**
 * Netris widget (docs/GAMES.md "Netris"): a falling-blocks board played against a remote opponent
 * through the relay `GET /games/netris`. Lobby (room code or quick match, display name) → waiting
 * (60 s) → matched (Ready) → playing (own board, opponent's mini-board, garbage) → result. Keys
 * while the board has focus: ←/→ move, ↓ soft drop, ↑ or X rotate, Z rotate back, Space drop.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { API_BASE, toError, errorText } from "../../lib/api.ts";
import { html } from "../../lib/html.ts";
import type { WidgetProps } from "../../widgets/types.ts";
import { NetrisBoard, type LockResult } from "./engine.ts";
import { drawBoard, drawMini } from "./draw.ts";
import { boardKey } from "./keys.ts";

type Frame = { type: string } & Record<string, unknown>;
type Phase =
  | { kind: "lobby"; notice?: string; error?: string }
  | { kind: "connecting" }
  | { kind: "waiting"; room: string; until: number }
  | { kind: "matched"; room: string; opponent: string; me: boolean; them: boolean }
  | { kind: "playing"; room: string; opponent: string }
  | { kind: "over"; result: "win" | "lose"; reason: string; opponent: string };

const REASONS: Record<string, string> = {
  top_out: "your stack reached the top",
  opponent_top_out: "your opponent's stack reached the top",
  opponent_left: "your opponent left the game",
};

const S = {
  wrap: { display: "flex", flexDirection: "column", gap: "8px", padding: "10px", height: "100%", minHeight: 0 },
  row: { display: "flex", gap: "8px", alignItems: "flex-end", flexWrap: "wrap" },
  play: { display: "flex", gap: "14px", alignItems: "flex-start", flex: 1, minHeight: 0, outline: "none" },
  side: { display: "flex", flexDirection: "column", gap: "6px", fontSize: "13px", minWidth: "110px" },
};

export function Netris(_props: WidgetProps) {
  const [phase, setPhase] = useState<Phase>({ kind: "lobby" });
  const [room, setRoom] = useState("");
  const [display, setDisplay] = useState("");
  const [, setTick] = useState(0);
  const [now, setNow] = useState(Date.now());
  const ws = useRef<WebSocket | null>(null);
  const board = useRef<NetrisBoard | null>(null);
  const opp = useRef<string[] | null>(null);
  const sent = useRef(0);
  const phaseRef = useRef(phase);
  phaseRef.current = phase;
  const canvas = useRef<HTMLCanvasElement>(null);
  const mini = useRef<HTMLCanvasElement>(null);
  const playRef = useRef<HTMLDivElement>(null);
  const redraw = () => setTick((t) => t + 1);

  const send = (f: unknown) => ws.current?.readyState === WebSocket.OPEN && ws.current.send(JSON.stringify(f));
  const afterLock = (r: LockResult | undefined) => {
    const b = board.current;
    if (!r || !b) return;
    send({ type: "board", rows: b.rows() });
    if (r.cleared > 0) send({ type: "line_clear", lines: r.cleared });
    if (r.toppedOut) send({ type: "top_out" });
  };

  const leave = (next: Phase = { kind: "lobby" }) => {
    const s = ws.current;
    ws.current = null;
    s?.close(1000, "left");
    board.current = null;
    setPhase(next);
  };

  const onFrame = (f: Frame) => {
    const p = phaseRef.current;
    const opponent = "opponent" in p ? p.opponent : "";
    switch (f.type) {
      case "waiting":
        return setPhase({ kind: "waiting", room: String(f.room), until: Date.now() + Number(f.timeout_ms) });
      case "waiting_timeout":
        return leave({ kind: "lobby", notice: `Nobody joined room ${String(f.room)} within 60 s.` });
      case "matched":
        return setPhase({
          kind: "matched",
          room: String(f.room),
          opponent: String(f.opponent),
          me: false,
          them: false,
        });
      case "ready":
        if (p.kind === "matched") setPhase({ ...p, ...(f.from === "you" ? { me: true } : { them: true }) });
        return;
      case "start":
        if (p.kind !== "matched") return;
        board.current = new NetrisBoard(Number(f.seed));
        opp.current = null;
        sent.current = 0;
        setPhase({ kind: "playing", room: p.room, opponent: p.opponent });
        requestAnimationFrame(() => playRef.current?.focus());
        return;
      case "garbage_in":
        board.current?.receive(Number(f.lines), Number(f.hole));
        return redraw();
      case "line_clear":
        sent.current += Number(f.garbage);
        return redraw();
      case "opponent_board":
        opp.current = f.rows as string[];
        return redraw();
      case "opponent_left":
        // Before the start nobody wins and the relay closes the room; while playing game_over follows.
        if (p.kind === "matched") leave({ kind: "lobby", notice: `${p.opponent} left before the start.` });
        return;
      case "game_over": {
        const s = ws.current;
        ws.current = null;
        s?.close(1000, "game over");
        return setPhase({
          kind: "over",
          result: f.result === "win" ? "win" : "lose",
          reason: String(f.reason),
          opponent,
        });
      }
      case "error":
        if (p.kind === "connecting") return leave({ kind: "lobby", error: String(f.message) });
        return;
    }
  };

  const join = async (quick: boolean) => {
    const q = new URLSearchParams(quick ? { mode: "quick" } : { room: room.trim() });
    if (display.trim()) q.set("display", display.trim());
    setPhase({ kind: "connecting" });
    try {
      // A plain GET first: a refused WebSocket handshake does not say why (docs/GAMES.md).
      const r = await fetch(`${API_BASE}/games/netris?${q}`, { credentials: "same-origin" });
      if (!r.ok) throw await toError(r);
    } catch (e) {
      return setPhase({ kind: "lobby", error: errorText(e) });
    }
    const s = new WebSocket(
      `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}${API_BASE}/games/netris?${q}`,
    );
    ws.current = s;
    s.onmessage = (e) => ws.current === s && onFrame(JSON.parse(String(e.data)) as Frame);
    s.onclose = (e) => {
      if (ws.current !== s) return;
      ws.current = null;
      board.current = null;
      setPhase({ kind: "lobby", error: `The connection to the relay closed${e.reason ? `: ${e.reason}` : ""}.` });
    };
  };

  useEffect(() => () => leave(), []);

  // Gravity while playing; faster with every 10 lines.
  const playing = phase.kind === "playing";
  const level = board.current ? Math.floor(board.current.lines / 10) : 0;
  useEffect(() => {
    if (!playing) return;
    const t = setInterval(
      () => {
        afterLock(board.current?.step());
        redraw();
      },
      Math.max(120, 800 - level * 70),
    );
    return () => clearInterval(t);
  }, [playing, level]);

  useEffect(() => {
    if (phase.kind !== "waiting") return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [phase.kind]);

  useEffect(() => {
    if (canvas.current && board.current) drawBoard(canvas.current, board.current);
    if (mini.current) drawMini(mini.current, opp.current);
  });

  const onKey = (e: KeyboardEvent) => {
    const b = board.current;
    if (!b || phase.kind !== "playing") return;
    const r = boardKey(e, b);
    if (!r) return;
    afterLock(r.lock);
    redraw();
  };

  if (phase.kind === "lobby") {
    return html`<form style=${S.wrap} aria-label="Join a Netris game" onSubmit=${(e: Event) => (e.preventDefault(), room.trim() && join(false))}>
      <p class="muted" style=${{ margin: 0 }}>Two players, one relay: clear lines to send garbage rows to your opponent.</p>
      ${phase.notice && html`<p role="status" class="alert alert-warn">${phase.notice}</p>`}
      ${phase.error && html`<p role="alert" class="alert alert-error">${phase.error}</p>`}
      <div style=${S.row}>
        <label>Room code<br /><input value=${room} maxLength=${64} placeholder="e.g. noc-lunch" onInput=${(e: Event) => setRoom((e.target as HTMLInputElement).value)} /></label>
        <label>Your name<br /><input value=${display} maxLength=${32} placeholder="your username" onInput=${(e: Event) => setDisplay((e.target as HTMLInputElement).value)} /></label>
      </div>
      <div class="btn-group">
        <button type="submit" class="btn btn-primary" disabled=${!room.trim()}>Join room</button>
        <button type="button" class="btn" onClick=${() => join(true)}>Quick match</button>
      </div>
    </form>`;
  }
  if (phase.kind === "connecting")
    return html`<p class="loading" role="status" style=${{ padding: "10px" }}>Connecting to the Netris relay…</p>`;
  if (phase.kind === "waiting") {
    const left = Math.max(0, Math.ceil((phase.until - now) / 1000));
    return html`<div style=${S.wrap}>
      <p role="status">Waiting for an opponent in room <strong>${phase.room}</strong>… (${left} s left)</p>
      <div><button type="button" class="btn" onClick=${() => leave()}>Leave</button></div>
    </div>`;
  }
  if (phase.kind === "matched") {
    return html`<div style=${S.wrap}>
      <p role="status">Matched with <strong>${phase.opponent}</strong> in room ${phase.room}. ${phase.them ? `${phase.opponent} is ready.` : `${phase.opponent} is not ready yet.`}</p>
      <div class="btn-group">
        <button type="button" class="btn btn-primary" disabled=${phase.me} onClick=${() => send({ type: "ready" })}>${phase.me ? "Ready: waiting for the opponent" : "Ready"}</button>
        <button type="button" class="btn" onClick=${() => leave()}>Leave</button>
      </div>
    </div>`;
  }
  if (phase.kind === "over") {
    return html`<div style=${S.wrap}>
      <p role="status" class=${phase.result === "win" ? "alert" : "alert alert-error"}><strong>${phase.result === "win" ? "You win" : "You lose"}</strong>: ${REASONS[phase.reason] ?? phase.reason}.</p>
      <div><button type="button" class="btn btn-primary" onClick=${() => setPhase({ kind: "lobby" })}>Play again</button></div>
    </div>`;
  }
  const b = board.current!;
  const incoming = b.incoming.reduce((n, x) => n + x.lines, 0);
  return html`<div style=${S.wrap}>
    <div ref=${playRef} style=${S.play} tabIndex=${0} role="group" aria-label="Netris board: arrows move, up rotates, space drops" onKeyDown=${onKey}>
      <canvas ref=${canvas} width=${200} height=${400} role="img" aria-label=${`Your board: ${b.pieces} pieces, ${b.lines} lines`} style=${{ height: "min(100%, 400px)", aspectRatio: "1 / 2", border: "1px solid var(--line)", background: "#101820" }}></canvas>
      <div style=${S.side}>
        <strong>vs ${phase.opponent}</strong>
        <canvas ref=${mini} width=${80} height=${160} role="img" aria-label=${`Board of ${phase.opponent}`} style=${{ width: "80px", height: "160px", border: "1px solid var(--line)", background: "#101820" }}></canvas>
        <dl style=${{ margin: 0, display: "grid", gridTemplateColumns: "auto auto", gap: "2px 8px" }} aria-label="Game status">
          <dt>Pieces</dt><dd style=${{ margin: 0 }}>${b.pieces}</dd>
          <dt>Lines</dt><dd style=${{ margin: 0 }}>${b.lines}</dd>
          <dt>Garbage sent</dt><dd style=${{ margin: 0 }}>${sent.current}</dd>
          <dt>Garbage received</dt><dd style=${{ margin: 0 }}>${b.garbageReceived}</dd>
          <dt>Incoming</dt><dd style=${{ margin: 0, color: incoming ? "var(--danger)" : "inherit" }}>${incoming}</dd>
          <dt>Next</dt><dd style=${{ margin: 0 }}>${b.next()}</dd>
        </dl>
        <button type="button" class="btn btn-danger" onClick=${() => leave({ kind: "lobby", notice: "You left the game (your opponent wins)." })}>Leave game</button>
      </div>
    </div>
  </div>`;
}
