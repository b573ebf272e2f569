/**
 * A walkable Doom map (docs/GAMES.md "Doom"): the player starts on player 1's start, moves with
 * collision against walls, steps and low ceilings, and sees a first-person view drawn by casting one
 * ray per screen column over the linedefs (front to back, sector heights, upper/lower/middle
 * textures with the palette, textured floors and ceilings, light by sector and distance).
 */
import {
  ML_BLOCKING,
  ML_DONTPEGBOTTOM,
  ML_DONTPEGTOP,
  type DoomMap,
  type Sector,
  type Sidedef,
  type Wad,
} from "./wad.ts";

export const RADIUS = 16;
const STEP = 24;
const HEADROOM = 56;
const EYE = 41;

interface Line {
  ax: number;
  ay: number;
  ex: number;
  ey: number;
  len: number;
  flags: number;
  right: Sidedef;
  left: Sidedef | undefined;
}

export interface Player {
  x: number;
  y: number;
  angle: number;
}

const cross = (ax: number, ay: number, bx: number, by: number) => ax * by - ay * bx;

export class World {
  readonly lines: Line[];
  readonly player: Player;
  readonly bounds: { minX: number; minY: number; maxX: number; maxY: number };

  constructor(
    readonly wad: Wad,
    readonly map: DoomMap,
  ) {
    this.lines = map.linedefs.map((l) => {
      const a = map.vertexes[l.v1]!;
      const b = map.vertexes[l.v2]!;
      return {
        ax: a.x,
        ay: a.y,
        ex: b.x - a.x,
        ey: b.y - a.y,
        len: Math.hypot(b.x - a.x, b.y - a.y),
        flags: l.flags,
        right: map.sidedefs[l.right]!,
        left: l.left >= 0 ? map.sidedefs[l.left] : undefined,
      };
    });
    const start = map.things.find((t) => t.type === 1);
    if (!start) throw new Error(`map ${map.name} has no player 1 start`);
    this.player = { x: start.x, y: start.y, angle: (start.angle * Math.PI) / 180 };
    const xs = map.vertexes.map((v) => v.x);
    const ys = map.vertexes.map((v) => v.y);
    this.bounds = { minX: Math.min(...xs), minY: Math.min(...ys), maxX: Math.max(...xs), maxY: Math.max(...ys) };
  }

  private sector(side: Sidedef | undefined): Sector | undefined {
    return side ? this.map.sectors[side.sector] : undefined;
  }

  /** The sector the point is in: the side facing it of the nearest line crossed going east. */
  sectorAt(x: number, y: number): Sector | undefined {
    let best = Infinity;
    let found: Sector | undefined;
    const dx = 1;
    const dy = 0.0007;
    for (const l of this.lines) {
      const den = cross(dx, dy, l.ex, l.ey);
      if (Math.abs(den) < 1e-9) continue;
      const t = cross(l.ax - x, l.ay - y, l.ex, l.ey) / den;
      const s = cross(l.ax - x, l.ay - y, dx, dy) / den;
      if (t <= 0 || s < 0 || s > 1 || t >= best) continue;
      best = t;
      found = this.sector(cross(l.ex, l.ey, x - l.ax, y - l.ay) < 0 ? l.right : l.left);
    }
    return found;
  }

  /** Moves by (forward, strafe) map units and turns by `turn` radians; walls stop, sliding along them. */
  move(forward: number, strafe: number, turn: number): void {
    const p = this.player;
    p.angle = (p.angle + turn) % (2 * Math.PI);
    const dx = Math.cos(p.angle) * forward + Math.cos(p.angle - Math.PI / 2) * strafe;
    const dy = Math.sin(p.angle) * forward + Math.sin(p.angle - Math.PI / 2) * strafe;
    if (dx === 0 && dy === 0) return;
    for (const [mx, my] of [
      [dx, dy],
      [dx, 0],
      [0, dy],
    ] as const) {
      if ((mx !== 0 || my !== 0) && this.free(p.x + mx, p.y + my)) {
        p.x += mx;
        p.y += my;
        return;
      }
    }
  }

  private free(x: number, y: number): boolean {
    const p = this.player;
    const here = this.sectorAt(p.x, p.y);
    for (const l of this.lines) {
      // Distance from (x, y) to the segment.
      const t = Math.max(0, Math.min(1, ((x - l.ax) * l.ex + (y - l.ay) * l.ey) / (l.len * l.len || 1)));
      const d = Math.hypot(l.ax + t * l.ex - x, l.ay + t * l.ey - y);
      if (d >= RADIUS) continue;
      if (!l.left || l.flags & ML_BLOCKING) return false;
      const onRight = cross(l.ex, l.ey, p.x - l.ax, p.y - l.ay) < 0;
      const other = this.sector(onRight ? l.left : l.right);
      if (!other || !here) return false;
      if (
        other.floor - here.floor > STEP ||
        Math.min(other.ceil, here.ceil) - Math.max(other.floor, here.floor) < HEADROOM
      )
        return false;
    }
    return true;
  }

  eyeZ(): number {
    return (this.sectorAt(this.player.x, this.player.y)?.floor ?? 0) + EYE;
  }

  /**
   * The lines each screen column may hit: every line in front of the player is projected once per
   * frame to its column range (clipped at a near plane), so a column tests a few dozen lines, not all.
   */
  private bucket(W: number, proj: number): Line[][] {
    const p = this.player;
    const cos = Math.cos(p.angle);
    const sin = Math.sin(p.angle);
    const out: Line[][] = Array.from({ length: W }, () => []);
    const NEAR = 0.5;
    for (const l of this.lines) {
      const ax = l.ax - p.x;
      const ay = l.ay - p.y;
      const bx = ax + l.ex;
      const by = ay + l.ey;
      // Camera space: depth along the view, lateral to the left.
      let ad = ax * cos + ay * sin;
      let al = -ax * sin + ay * cos;
      let bd = bx * cos + by * sin;
      let bl = -bx * sin + by * cos;
      if (ad < NEAR && bd < NEAR) continue;
      if (ad < NEAR) {
        const k = (NEAR - ad) / (bd - ad);
        al += (bl - al) * k;
        ad = NEAR;
      } else if (bd < NEAR) {
        const k = (NEAR - bd) / (ad - bd);
        bl += (al - bl) * k;
        bd = NEAR;
      }
      const c1 = W / 2 - (al * proj) / ad;
      const c2 = W / 2 - (bl * proj) / bd;
      const from = Math.max(0, Math.floor(Math.min(c1, c2)) - 1);
      const to = Math.min(W - 1, Math.ceil(Math.max(c1, c2)) + 1);
      for (let c = from; c <= to; c++) out[c]!.push(l);
    }
    return out;
  }

  /** Draws the first-person view into `img` (RGBA). */
  render(img: ImageData): void {
    const W = img.width;
    const H = img.height;
    const out = img.data;
    const pal = this.wad.palette;
    const p = this.player;
    const eye = this.eyeZ();
    const proj = W / 2 / Math.tan(Math.PI / 4);
    const hits: Array<{ t: number; s: number; l: Line }> = [];
    const buckets = this.bucket(W, proj);
    const put = (x: number, y: number, r: number, g: number, b: number) => {
      const i = (y * W + x) * 4;
      out[i] = r;
      out[i + 1] = g;
      out[i + 2] = b;
      out[i + 3] = 255;
    };
    for (let col = 0; col < W; col++) {
      const rel = Math.atan((W / 2 - col - 0.5) / proj);
      const a = p.angle + rel;
      const dx = Math.cos(a);
      const dy = Math.sin(a);
      const cosRel = Math.cos(rel);
      hits.length = 0;
      for (const l of buckets[col]!) {
        const den = cross(dx, dy, l.ex, l.ey);
        if (Math.abs(den) < 1e-9) continue;
        const t = cross(l.ax - p.x, l.ay - p.y, l.ex, l.ey) / den;
        if (t <= 0.5) continue;
        const s = cross(l.ax - p.x, l.ay - p.y, dx, dy) / den;
        if (s < 0 || s > 1) continue;
        hits.push({ t, s, l });
      }
      hits.sort((u, v) => u.t - v.t);
      let top = 0;
      let bot = H - 1;
      // A floor or ceiling at height z between screen rows y0 and y1: each pixel's distance along
      // the ray gives the map point under it, whose texel of the 64 × 64 flat is drawn.
      const plane = (y0: number, y1: number, z: number, pic: string, light: number) => {
        const flat = this.wad.flat(pic);
        for (let y = Math.max(top, Math.ceil(y0)); y <= Math.min(bot, Math.floor(y1)); y++) {
          if (pic === "F_SKY1") {
            put(col, y, 70, 110, 170);
            continue;
          }
          const perp = ((eye - z) * proj) / (y + 0.5 - H / 2);
          const shade = Math.max(0.12, Math.min(1, (light / 255) * (1.25 - Math.abs(perp) / 1800)));
          if (!flat || !(perp > 0)) {
            put(col, y, 96 * shade, 96 * shade, 96 * shade);
            continue;
          }
          const along = perp / cosRel;
          const idx = flat[(-Math.floor(p.y + dy * along) & 63) * 64 + (Math.floor(p.x + dx * along) & 63)]!;
          put(col, y, pal[idx * 3]! * shade, pal[idx * 3 + 1]! * shade, pal[idx * 3 + 2]! * shade);
        }
      };
      for (const { t, s, l } of hits) {
        const onRight = cross(l.ex, l.ey, p.x - l.ax, p.y - l.ay) < 0;
        const side = onRight ? l.right : l.left;
        const backSide = onRight ? l.left : l.right;
        const front = this.sector(side);
        if (!side || !front) continue;
        const back = l.left ? this.sector(backSide) : undefined;
        const d = t * cosRel;
        const yOf = (z: number) => H / 2 - ((z - eye) * proj) / d;
        const shade = Math.max(0.12, Math.min(1, (front.light / 255) * (1.25 - d / 1800)));
        const cy = yOf(front.ceil);
        const fy = yOf(front.floor);
        const sky = front.ceilPic === "F_SKY1";
        plane(top, cy, front.ceil, front.ceilPic, front.light);
        plane(fy, bot, front.floor, front.floorPic, front.light);
        const u = (onRight ? s : 1 - s) * l.len + side.xoff;
        const wall = (name: string, y0: number, y1: number, anchor: number) => {
          const tex = this.wad.texture(name);
          for (let y = Math.max(top, Math.ceil(y0)); y <= Math.min(bot, Math.floor(y1)); y++) {
            if (!tex) {
              put(col, y, 120 * shade, 110 * shade, 100 * shade);
              continue;
            }
            const z = eye - ((y - H / 2) * d) / proj;
            const tx = ((Math.floor(u) % tex.width) + tex.width) % tex.width;
            const ty = ((Math.floor(anchor - z + side.yoff) % tex.height) + tex.height) % tex.height;
            const idx = tex.pixels[tx * tex.height + ty]!;
            if (idx < 0) put(col, y, 0, 0, 0);
            else put(col, y, pal[idx * 3]! * shade, pal[idx * 3 + 1]! * shade, pal[idx * 3 + 2]! * shade);
          }
        };
        if (!back) {
          const tex = this.wad.texture(side.middle);
          wall(side.middle, cy, fy, l.flags & ML_DONTPEGBOTTOM ? front.floor + (tex?.height ?? 0) : front.ceil);
          top = bot + 1;
          break;
        }
        const bcy = yOf(back.ceil);
        const bfy = yOf(back.floor);
        if (back.ceil < front.ceil && !(sky && back.ceilPic === "F_SKY1")) {
          const tex = this.wad.texture(side.upper);
          wall(side.upper, cy, bcy, l.flags & ML_DONTPEGTOP ? front.ceil : back.ceil + (tex?.height ?? 0));
        }
        if (back.floor > front.floor) wall(side.lower, bfy, fy, l.flags & ML_DONTPEGBOTTOM ? front.ceil : back.floor);
        top = Math.max(top, Math.ceil(Math.max(cy, bcy)));
        bot = Math.min(bot, Math.floor(Math.min(fy, bfy)));
        if (top > bot) break;
      }
      for (let y = top; y <= bot; y++) put(col, y, 0, 0, 0);
    }
  }

  /** The automap: every line from above, the player as an arrow, centred on the player. */
  automap(g: CanvasRenderingContext2D, w: number, h: number, scale = 0.12): void {
    const p = this.player;
    g.fillStyle = "#000";
    g.fillRect(0, 0, w, h);
    const sx = (x: number) => w / 2 + (x - p.x) * scale;
    const sy = (y: number) => h / 2 - (y - p.y) * scale;
    g.lineWidth = 1;
    for (const l of this.lines) {
      const f = this.sector(l.right);
      const b = this.sector(l.left);
      g.strokeStyle = !b
        ? "#e04040"
        : f && b.floor !== f.floor
          ? "#b8864b"
          : f && b.ceil !== f.ceil
            ? "#e0d040"
            : "#505050";
      g.beginPath();
      g.moveTo(sx(l.ax), sy(l.ay));
      g.lineTo(sx(l.ax + l.ex), sy(l.ay + l.ey));
      g.stroke();
    }
    const tip = (k: number, da: number) =>
      [w / 2 + Math.cos(p.angle + da) * k, h / 2 - Math.sin(p.angle + da) * k] as const;
    g.strokeStyle = "#fff";
    g.beginPath();
    g.moveTo(...tip(-6, 0));
    g.lineTo(...tip(8, 0));
    g.lineTo(...tip(5, 2.6));
    g.moveTo(...tip(8, 0));
    g.lineTo(...tip(5, -2.6));
    g.stroke();
  }
}
