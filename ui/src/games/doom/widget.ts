/**
 * Doom widget (docs/GAMES.md "Doom"): loads `doom1.wad` from `/gamedata/`, starts the first map
 * (E1M1, or MAP01 for a Doom II IWAD) at player 1's start and draws it with our own WAD reader and
 * ray caster (wad.ts, world.ts). Keys while the view has focus: ↑/W forward, ↓/S back, ←/→ turn,
 * A/D strafe, Tab automap, Esc closes the automap, then leaves the view.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "../../lib/html.ts";
import type { WidgetProps } from "../../widgets/types.ts";
import { Wad, WadError } from "./wad.ts";
import { World } from "./world.ts";

const URL_WAD = "/gamedata/doom1.wad";
const W = 320;
const H = 200;
const SPEED = 0.28; // map units per ms
const TURN = 0.0028; // radians per ms

type State =
  | { kind: "loading"; bytes: number; total: number }
  | { kind: "missing" }
  | { kind: "error"; message: string }
  | { kind: "ready"; world: World; title: string; iwad: boolean };

const MiB = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;

async function load(onProgress: (bytes: number, total: number) => void): Promise<State> {
  const r = await fetch(URL_WAD, { credentials: "same-origin" });
  if (r.status === 404) {
    // The route's own 404 names the directory; without the route the server's generic 404 answers.
    const body = (await r.json().catch(() => ({}))) as { message?: string };
    if (body.message?.includes("game data directory")) return { kind: "missing" };
    return {
      kind: "error",
      message:
        "This server does not serve game data: games are off (coordinator.widgets.control.games) or coordinator.http_server.gamedata_dir is empty.",
    };
  }
  if (!r.ok) return { kind: "error", message: `the server answered HTTP ${r.status} for ${URL_WAD}` };
  const total = Number(r.headers.get("content-length") ?? 0);
  const reader = r.body!.getReader();
  const parts: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    bytes += value.length;
    onProgress(bytes, total);
  }
  const buf = new Uint8Array(bytes);
  let at = 0;
  for (const p of parts) {
    buf.set(p, at);
    at += p.length;
  }
  try {
    const wad = new Wad(buf.buffer);
    const name = wad.firstMap();
    if (!name) return { kind: "error", message: "doom1.wad holds no map (E1M1 or MAP01)" };
    const world = new World(wad, wad.map(name));
    // Level names live in the DEHACKED lump of Freedoom (HUSTR_E1M1 = ...); plain Doom has none there.
    const dh = wad.lump("DEHACKED");
    const key = /^E(\d)M(\d)$/.test(name) ? `HUSTR_${name}` : `HUSTR_${Number(name.slice(3))}`;
    const found = dh
      ? new TextDecoder().decode(dh).match(new RegExp(`^\\s*${key}\\s*=\\s*(.+?)\\s*$`, "m"))?.[1]
      : undefined;
    return { kind: "ready", world, title: found ? `${name} · ${found}` : name, iwad: wad.kind === "IWAD" };
  } catch (e) {
    return {
      kind: "error",
      message: `doom1.wad could not be read: ${e instanceof WadError || e instanceof Error ? e.message : String(e)}`,
    };
  }
}

export function Doom(_props: WidgetProps) {
  const [state, setState] = useState<State>({ kind: "loading", bytes: 0, total: 0 });
  const [attempt, setAttempt] = useState(0);
  const [automap, setAutomap] = useState(false);
  const [pos, setPos] = useState("");
  const canvas = useRef<HTMLCanvasElement>(null);
  const view = useRef<HTMLDivElement>(null);
  const keys = useRef(new Set<string>());

  useEffect(() => {
    let live = true;
    setState({ kind: "loading", bytes: 0, total: 0 });
    load((bytes, total) => live && setState({ kind: "loading", bytes, total })).then(
      (s) => live && setState(s),
      (e: unknown) =>
        live &&
        setState({
          kind: "error",
          message: `doom1.wad could not be loaded: ${e instanceof Error ? e.message : String(e)}`,
        }),
    );
    return () => {
      live = false;
    };
  }, [attempt]);

  const world = state.kind === "ready" ? state.world : undefined;
  const paint = () => {
    const c = canvas.current;
    const g = c?.getContext("2d");
    if (!c || !g || !world) return;
    if (automap) world.automap(g, W, H);
    else {
      const img = g.createImageData(W, H);
      world.render(img);
      g.putImageData(img, 0, 0);
    }
    const p = world.player;
    setPos(
      `x ${Math.round(p.x)}, y ${Math.round(p.y)}, facing ${Math.round(((((p.angle * 180) / Math.PI) % 360) + 360) % 360)}°`,
    );
  };

  useEffect(paint, [world, automap]);

  // While keys are held: move by the time since the last frame, then draw.
  useEffect(() => {
    if (!world) return;
    let raf = 0;
    let last = performance.now();
    const frame = (now: number) => {
      const dt = Math.min(50, now - last);
      last = now;
      const k = keys.current;
      if (k.size > 0) {
        const fwd = (k.has("ArrowUp") || k.has("w") ? 1 : 0) - (k.has("ArrowDown") || k.has("s") ? 1 : 0);
        const strafe = (k.has("d") ? 1 : 0) - (k.has("a") ? 1 : 0);
        const turn = (k.has("ArrowLeft") ? 1 : 0) - (k.has("ArrowRight") ? 1 : 0);
        world.move(fwd * SPEED * dt, strafe * SPEED * dt, turn * TURN * dt);
        paint();
      }
      raf = requestAnimationFrame(frame);
    };
    raf = requestAnimationFrame(frame);
    return () => cancelAnimationFrame(raf);
  }, [world, automap]);

  const MOVES = new Set(["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "w", "a", "s", "d"]);
  const keyOf = (e: KeyboardEvent) => (e.key.length === 1 ? e.key.toLowerCase() : e.key);
  const onKeyDown = (e: KeyboardEvent) => {
    const k = keyOf(e);
    if (k === "Tab") {
      e.preventDefault();
      setAutomap((m) => !m);
    } else if (k === "Escape") {
      if (automap) setAutomap(false);
      else view.current?.blur();
    } else if (MOVES.has(k)) {
      e.preventDefault();
      keys.current.add(k);
    }
  };
  const onKeyUp = (e: KeyboardEvent) => keys.current.delete(keyOf(e));

  const box = { padding: "10px", display: "flex", flexDirection: "column", gap: "6px", height: "100%", minHeight: 0 };
  if (state.kind === "loading") {
    return html`<p class="loading" role="status" style=${box}>Loading doom1.wad… ${state.bytes ? `${MiB(state.bytes)}${state.total ? ` of ${MiB(state.total)}` : ""}` : ""}</p>`;
  }
  if (state.kind === "missing" || state.kind === "error") {
    return html`<div class="empty" style=${box}>
      ${
        state.kind === "missing"
          ? html`<p role="status">No game data: put <code>doom1.wad</code> into the game data directory (<code>coordinator.http_server.gamedata_dir</code>, by default <code>/var/lib/svc/gamedata</code> on an installed appliance). Freedoom's <code>freedoom1.wad</code> (Debian package <code>freedoom</code>) works under that name.</p>`
          : html`<p role="alert">${state.message}</p>`
      }
      <button type="button" class="btn" onClick=${() => setAttempt((n) => n + 1)}>Try again</button>
    </div>`;
  }
  return html`<div style=${box}>
    <div style=${{ display: "flex", gap: "10px", alignItems: "baseline", flexWrap: "wrap" }}>
      <strong>${state.title}</strong>
      <span class="muted" style=${{ fontSize: "12px" }}>${automap ? "Automap" : "View"} · ${pos}</span>
    </div>
    <div
      ref=${view}
      tabIndex=${0}
      role="group"
      aria-label="Doom view: arrows or W/S move and turn, A/D strafe, Tab automap, Esc leaves"
      onKeyDown=${onKeyDown}
      onKeyUp=${onKeyUp}
      onBlur=${() => keys.current.clear()}
      style=${{ flex: 1, minHeight: 0, display: "flex", justifyContent: "center", outlineOffset: "2px" }}
    >
      <canvas ref=${canvas} width=${W} height=${H} role="img" aria-label=${automap ? "Automap" : "First-person view"} style=${{ height: "100%", maxWidth: "100%", aspectRatio: "16 / 10", imageRendering: "pixelated", background: "#000" }}></canvas>
    </div>
    <p class="muted" style=${{ margin: 0, fontSize: "12px" }}>Click the view, then: ↑/W ↓/S move, ←/→ turn, A/D strafe, Tab automap, Esc leave.</p>
  </div>`;
}
