/**
 * Packet Defender rules (docs/GAMES.md "Packet Defender"), no DOM: packets from the live capture
 * fly from the right towards the firewall on the left in one of five lanes. Failures (SIP 4xx,
 * 5xx, 6xx) are hostile: shoot them before they reach the firewall or lose a life. Healthy packets
 * should pass: shooting one costs points, letting it through scores one.
 */
import type { LiveFrame } from "../../lib/live-stream.ts";

export const LANES = 5;
export const LIVES = 3;
/** The field is 1.0 wide; packets cross it in about 6 s. */
const SPEED = 1 / 6000;
const SHOT_SPEED = 1 / 600;
/** At most this many packets at once; more are counted, not shown. */
export const MAX_IN_FLIGHT = 12;

export interface Packet {
  id: number;
  label: string;
  hostile: boolean;
  lane: number;
  x: number;
}

export interface Shot {
  lane: number;
  x: number;
}

/** Label and hostility of a captured event; undefined for events the game ignores. */
export function classify(f: LiveFrame): { label: string; hostile: boolean } | undefined {
  const s = f.sip;
  if (s) {
    const code = Number(s.resp_code);
    if (code >= 100) return { label: `${code} ${s.resp_text}`.trim(), hostile: code >= 400 };
    if (s.method) return { label: s.method, hostile: false };
    return undefined;
  }
  if (f.proto === 5) return { label: "RTCP", hostile: false };
  return undefined;
}

export class Defender {
  packets: Packet[] = [];
  shots: Shot[] = [];
  lane = 2;
  lives = LIVES;
  score = 0;
  shotHostile = 0;
  shotFriendly = 0;
  delivered = 0;
  breached = 0;
  seen = 0;
  dropped = 0;
  private seq = 0;

  get over(): boolean {
    return this.lives <= 0;
  }

  /** A new packet; its lane is spread by a hash of its label and arrival number. */
  add(label: string, hostile: boolean): void {
    if (this.over) return;
    this.seen += 1;
    if (this.packets.length >= MAX_IN_FLIGHT) {
      this.dropped += 1;
      return;
    }
    const id = ++this.seq;
    let h = id * 2654435761;
    for (const c of label) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
    const lane = (h >>> 0) % LANES;
    // Behind the last packet of the lane when it has not moved far yet, so labels never overlap.
    const behind = Math.max(1, ...this.packets.filter((p) => p.lane === lane).map((p) => p.x + 0.32));
    this.packets.push({ id, label, hostile, lane, x: behind });
  }

  moveLane(d: -1 | 1): void {
    if (!this.over) this.lane = Math.max(0, Math.min(LANES - 1, this.lane + d));
  }

  fire(): void {
    if (!this.over && this.shots.filter((s) => s.lane === this.lane).length < 3)
      this.shots.push({ lane: this.lane, x: 0.05 });
  }

  /** Advances the game by `ms`. */
  step(ms: number): void {
    if (this.over) return;
    for (const s of this.shots) s.x += SHOT_SPEED * ms;
    for (const p of this.packets) p.x -= SPEED * ms;
    for (const s of this.shots) {
      const hit = this.packets
        .filter((p) => p.lane === s.lane && p.x <= s.x + 0.02 && p.x >= s.x - 0.08)
        .sort((a, b) => a.x - b.x)[0];
      if (!hit) continue;
      s.x = 2;
      this.packets = this.packets.filter((p) => p !== hit);
      if (hit.hostile) {
        this.shotHostile += 1;
        this.score += 10;
      } else {
        this.shotFriendly += 1;
        this.score -= 5;
      }
    }
    this.shots = this.shots.filter((s) => s.x <= 1);
    for (const p of this.packets.filter((q) => q.x <= 0.04)) {
      if (p.hostile) {
        this.breached += 1;
        this.lives -= 1;
      } else {
        this.delivered += 1;
        this.score += 1;
      }
    }
    this.packets = this.packets.filter((q) => q.x > 0.04);
  }
}
