/**
 * NetChess widget: two people play through the `/games/netchess` relay, others watch (docs/GAMES.md
 * "NetChess"). The server holds the game and the clocks; the widget shows its frames, counts the
 * running clock down between them, and sends moves, offers and chat.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { API_BASE, errorText, get } from "../../lib/api.ts";
import { html } from "../../lib/html.ts";
import type { WidgetProps } from "../../widgets/types.ts";
import { Board, type Side } from "./board.ts";
import { Lobby, joinQuery, type JoinForm } from "./netchess-lobby.ts";
import { Clock, OfferPrompt, ResultBanner } from "./netchess-parts.ts";

type Frame = { type: string } & Record<string, unknown>;
interface Pos {
  fen: string;
  legal: string[];
  white_ms: number;
  black_ms: number;
  at: number;
  started: boolean;
}
export interface Match {
  color: Side | null;
  room: string;
  you: string;
  opponent: string;
  white: string;
  black: string;
  spectator: boolean;
}
type Phase = "lobby" | "connecting" | "waiting" | "matched" | "playing" | "over";

export function NetChessWidget(_: WidgetProps) {
  const [phase, setPhase] = useState<Phase>("lobby");
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [room, setRoom] = useState<string>("");
  const [match, setMatch] = useState<Match | null>(null);
  const [pos, setPos] = useState<Pos | null>(null);
  const [last, setLast] = useState<string | undefined>();
  const [ready, setReady] = useState<Side[]>([]);
  const [offer, setOffer] = useState<{ kind: "draw" | "takeback"; from: Side } | null>(null);
  const [over, setOver] = useState<{ result: string; reason: string } | null>(null);
  const [chat, setChat] = useState<Array<{ from: string; text: string; color: Side | null }>>([]);
  const [watchers, setWatchers] = useState(0);
  const [confirmResign, setConfirmResign] = useState(false);
  const [draft, setDraft] = useState("");
  const ws = useRef<WebSocket | null>(null);
  // The socket handler was made at join time: what it needs to know later is read from a ref.
  const watching = useRef(false);

  useEffect(() => () => ws.current?.close(1000, "widget closed"), []);

  const send = (f: Record<string, unknown>) =>
    ws.current?.readyState === WebSocket.OPEN && ws.current.send(JSON.stringify(f));
  const position = (f: Frame, started: boolean) =>
    setPos({
      fen: String(f.fen),
      legal: (f.legal_moves as string[]) ?? [],
      white_ms: Number(f.white_ms),
      black_ms: Number(f.black_ms),
      at: Date.now(),
      started,
    });

  const onFrame = (f: Frame) => {
    switch (f.type) {
      case "waiting":
        setRoom(String(f.room));
        return setPhase("waiting");
      case "matched":
        watching.current = f.spectator === true;
        setMatch({
          color: (f.color as Side | null) ?? null,
          room: String(f.room),
          you: String(f.you),
          opponent: String(f.opponent),
          white: String(f.white),
          black: String(f.black),
          spectator: f.spectator === true,
        });
        setRoom(String(f.room));
        setReady([]);
        return setPhase((p) => (p === "playing" || p === "over" ? p : "matched"));
      case "player_ready":
        return setReady((r) => [...r, f.color as Side]);
      case "start":
        position(f, true);
        setNotice(null);
        return setPhase("playing");
      case "clock_sync":
        position(f, f.started === true);
        if (f.started === true) setPhase((p) => (p === "over" ? p : "playing"));
        return;
      case "opponent_move":
        position(f, true);
        setLast(String(f.uci));
        return setOffer(null);
      case "game_over":
        setOver({ result: String(f.result), reason: String(f.reason) });
        setPos((p) =>
          p
            ? {
                ...p,
                legal: [],
                white_ms: Number(f.white_ms),
                black_ms: Number(f.black_ms),
                at: Date.now(),
                started: false,
              }
            : p,
        );
        setOffer(null);
        setConfirmResign(false);
        return setPhase("over");
      case "draw_offered":
      case "takeback_offered":
        return setOffer({ kind: f.type === "draw_offered" ? "draw" : "takeback", from: f.from as Side });
      case "draw_declined":
        return setNotice("Your draw offer was declined.");
      case "takeback_declined":
        return setNotice("Your takeback request was declined.");
      case "chat":
        return setChat((c) => [
          ...c.slice(-99),
          { from: String(f.from), text: String(f.text), color: (f.color as Side | null) ?? null },
        ]);
      case "spectators":
        return setWatchers(Number(f.count));
      case "opponent_left":
        return setNotice(watching.current ? "A player has left." : "Your opponent has left.");
      case "waiting_timeout":
        return setNotice("No opponent joined in time.");
      case "error":
        return setNotice(String(f.message));
    }
  };

  const join = async (form: JoinForm) => {
    const q = joinQuery(form).toString();
    setError(null);
    setPhase("connecting");
    try {
      // The plain GET checks session and query: a refused WebSocket handshake would say nothing.
      await get(`/games/netchess?${q}`);
    } catch (e) {
      setError(errorText(e));
      return setPhase("lobby");
    }
    const sock = new WebSocket(
      `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}${API_BASE}/games/netchess?${q}`,
    );
    ws.current = sock;
    setChat([]);
    setOver(null);
    setPos(null);
    setLast(undefined);
    setNotice(null);
    setWatchers(0);
    sock.onmessage = (e: MessageEvent) => {
      try {
        onFrame(JSON.parse(String(e.data)) as Frame);
      } catch {
        /* not a frame of ours */
      }
    };
    sock.onclose = (e: CloseEvent) => {
      if (ws.current !== sock) return;
      ws.current = null;
      setPhase((p) => {
        if (p === "connecting" || p === "waiting") setError(e.reason || "The connection closed.");
        else if (p !== "over") setNotice(e.reason || "The connection closed.");
        return p === "over" || p === "playing" || p === "matched" ? "over" : "lobby";
      });
    };
  };

  const leave = () => {
    const s = ws.current;
    ws.current = null;
    s?.close(1000, "left");
    setPhase("lobby");
    setMatch(null);
    setConfirmResign(false);
  };

  if (phase === "lobby" || phase === "connecting")
    return html`<div class="netchess"><${Lobby} busy=${phase === "connecting"} error=${error} onJoin=${(f: JoinForm) => void join(f)} /></div>`;

  const me = match?.color ?? null;
  const orientation: Side = me ?? "white";
  const myTurn =
    phase === "playing" && me !== null && pos !== null && (pos.fen.split(" ")[1] === "w") === (me === "white");
  const top: Side = orientation === "white" ? "black" : "white";
  const nameOf = (s: Side) => (match ? (s === "white" ? match.white : match.black) : s);
  const toMove: Side | null =
    pos?.started && phase === "playing" ? (pos.fen.split(" ")[1] === "w" ? "white" : "black") : null;

  // Result, notices and offers: beside the board during a game (so the board keeps its room), above it before.
  const messages = html`${over && html`<${ResultBanner} over=${over} me=${me} />`}
    ${notice && html`<p class="alert small" role="status">${notice}</p>`}
    ${
      offer &&
      html`<${OfferPrompt} offer=${offer} onAnswer=${(yes: boolean) => {
        send({ type: `${offer.kind}_${yes ? "accept" : "decline"}` });
        setOffer(null);
      }} />`
    }`;

  // Esc anywhere in the widget answers an open offer with no (the prompt does not take the focus).
  const onKey = (e: KeyboardEvent) => {
    if (e.key !== "Escape" || !offer) return;
    e.stopPropagation();
    send({ type: `${offer.kind}_decline` });
    setOffer(null);
  };

  return html`<div class="netchess" onKeyDown=${onKey}>
    <div class="chess-bar">
      <span class="small">Room <strong>${room}</strong>${match?.spectator ? " · watching" : ""}${watchers > 0 ? ` · ${watchers} watching` : ""}</span>
      <button type="button" class="btn" onClick=${leave}>Leave</button>
    </div>
    ${phase === "waiting" && html`<p class="chess-status" role="status">Waiting for an opponent… share the room code <strong>${room}</strong>.</p>`}
    ${
      phase === "matched" &&
      html`<p class="chess-status" role="status">
      ${
        match?.spectator
          ? match.white && match.black
            ? `${match.white} (White) against ${match.black} (Black): waiting for both to be ready.`
            : "Waiting for a second player to join this room…"
          : `Matched with ${match?.opponent}. You play ${me}.`
      }
      ${me && !ready.includes(me) && html` <button type="button" class="btn btn-primary" onClick=${() => send({ type: "ready" })}>Ready</button>`}
      ${me && ready.includes(me) && " Waiting for your opponent to be ready…"}
    </p>`
    }
    ${!pos && messages}
    ${
      pos &&
      html`<div class="chess-main">
      <div>
        <${Clock} label=${`${nameOf(top)} (${top})`} ms=${top === "white" ? pos.white_ms : pos.black_ms} at=${pos.at} running=${toMove === top} />
        <${Board} fen=${pos.fen} orientation=${orientation} label="NetChess board" legal=${myTurn ? pos.legal : []} lastMove=${last} onMove=${(uci: string) => send({ type: "move", uci })} />
        <${Clock} label=${`${nameOf(orientation)} (${orientation})`} ms=${orientation === "white" ? pos.white_ms : pos.black_ms} at=${pos.at} running=${toMove === orientation} />
      </div>
      <div class="chess-side">
        ${phase === "playing" && html`<p class="chess-status" role="status">${myTurn ? "Your move" : toMove ? `${nameOf(toMove)} to move` : ""}</p>`}
        ${messages}
        ${
          phase === "playing" &&
          me &&
          html`<div class="btn-group">
          <button type="button" class="btn" onClick=${() => send({ type: "draw_offer" })}>Offer draw</button>
          <button type="button" class="btn" onClick=${() => send({ type: "takeback_request" })}>Takeback</button>
          <button type="button" class="btn btn-danger" onClick=${() => setConfirmResign(true)}>Resign</button>
        </div>`
        }
        ${
          confirmResign &&
          html`<${OfferPrompt} question="Resign this game?" autoFocus=${true} onAnswer=${(yes: boolean) => {
            if (yes) send({ type: "resign" });
            setConfirmResign(false);
          }} />`
        }
        <div class="chess-chat">
          <ul role="log" aria-label="Chat">${chat.map((c, i) => html`<li key=${i}><strong>${c.from}:</strong> ${c.text}</li>`)}</ul>
          ${
            me &&
            html`<form onSubmit=${(e: Event) => {
              e.preventDefault();
              if (draft.trim()) send({ type: "chat", text: draft });
              setDraft("");
            }}><input type="text" aria-label="Chat message" maxLength="200" value=${draft} onInput=${(e: Event) => setDraft((e.target as HTMLInputElement).value)} /><button type="submit" class="btn">Send</button></form>`
          }
        </div>
      </div>
    </div>`
    }
  </div>`;
}
