/** The NetChess lobby form: quick match, a room (named or a random code) or watching a room. */
import { useState } from "preact/hooks";
import { html } from "../../lib/html.ts";

export interface JoinForm {
  mode: "quick" | "room" | "spectate";
  room: string;
  color: "random" | "white" | "black";
  /** "minutes+increment seconds", e.g. "5+0". */
  tc: string;
  display: string;
}

export const TIME_CONTROLS = ["1+0", "3+2", "5+0", "10+0", "15+10", "30+0"];

/** The relay's query for a join (docs/GAMES.md "NetChess"). */
export function joinQuery(f: JoinForm): URLSearchParams {
  const q = new URLSearchParams({ mode: f.mode });
  if (f.room.trim()) q.set("room", f.room.trim());
  if (f.mode !== "spectate") {
    const [min, inc] = f.tc.split("+").map(Number);
    q.set("color", f.color);
    q.set("initial_sec", String((min ?? 5) * 60));
    q.set("increment_sec", String(inc ?? 0));
  }
  if (f.display.trim()) q.set("display", f.display.trim());
  return q;
}

export function Lobby({ onJoin, busy, error }: { onJoin(f: JoinForm): void; busy: boolean; error: string | null }) {
  const [f, setF] = useState<JoinForm>({ mode: "quick", room: "", color: "random", tc: "5+0", display: "" });
  const set = (k: keyof JoinForm) => (e: Event) => setF({ ...f, [k]: (e.target as HTMLInputElement).value });
  const roomNeeded = f.mode === "spectate";
  const roomBad = f.room.trim() !== "" && !/^[A-Za-z0-9_-]{1,64}$/.test(f.room.trim());
  return html`<form class="netchess-lobby" aria-label="NetChess lobby" onSubmit=${(e: Event) => {
    e.preventDefault();
    onJoin({ ...f, room: f.mode === "quick" ? "" : f.room });
  }}>
    <fieldset>
      <legend>Play</legend>
      ${(
        [
          ["quick", "Quick match (first come, first paired)"],
          ["room", "Room (a code to share; empty makes one)"],
          ["spectate", "Watch a room"],
        ] as const
      ).map(
        ([v, label]) =>
          html`<label key=${v}><input type="radio" name="netchess-mode" value=${v} checked=${f.mode === v} onChange=${set("mode")} /> ${label}</label>`,
      )}
    </fieldset>
    ${
      f.mode !== "quick" &&
      html`<label>Room code <input type="text" maxLength="64" value=${f.room} onInput=${set("room")} required=${roomNeeded} placeholder=${roomNeeded ? "code of the room to watch" : "empty: a random code"} aria-invalid=${roomBad} /></label>
      ${roomBad && html`<span class="field-error" role="alert">Letters, digits, _ and - only (at most 64).</span>`}`
    }
    ${
      f.mode !== "spectate" &&
      html`<label>Colour <select value=${f.color} onChange=${set("color")}><option value="random">Random</option><option value="white">White</option><option value="black">Black</option></select></label>
      <label>Time control <select value=${f.tc} onChange=${set("tc")} title="minutes per player + seconds added per move; the room's first player decides">${TIME_CONTROLS.map((t) => html`<option value=${t} key=${t}>${t}</option>`)}</select></label>`
    }
    <label>Name shown <input type="text" maxLength="32" value=${f.display} onInput=${set("display")} placeholder="your user name" /></label>
    <button type="submit" class="btn btn-primary" disabled=${busy || roomBad || (roomNeeded && !f.room.trim())}>${busy ? "Connecting…" : f.mode === "spectate" ? "Watch" : "Join"}</button>
    ${error && html`<p class="alert alert-error" role="alert">${error}</p>`}
  </form>`;
}
