/**
 * Reading a Doom IWAD (docs/GAMES.md "Doom"): the header and lump directory, the palette
 * (PLAYPAL), one map's THINGS, LINEDEFS, SIDEDEFS, VERTEXES and SECTORS, wall textures composed
 * from TEXTURE1/TEXTURE2 and PNAMES patches, and the 64 × 64 flats of floors and ceilings. Our own reader of
 * the documented file format; no Doom source is used.
 */
export interface Lump {
  name: string;
  offset: number;
  size: number;
}

export interface Vertex {
  x: number;
  y: number;
}
export interface Sidedef {
  xoff: number;
  yoff: number;
  upper: string;
  lower: string;
  middle: string;
  sector: number;
}
export interface Linedef {
  v1: number;
  v2: number;
  flags: number;
  right: number;
  /** -1 when one-sided. */
  left: number;
}
export interface Sector {
  floor: number;
  ceil: number;
  floorPic: string;
  ceilPic: string;
  light: number;
}
export interface Thing {
  x: number;
  y: number;
  angle: number;
  type: number;
}

export interface DoomMap {
  name: string;
  vertexes: Vertex[];
  linedefs: Linedef[];
  sidedefs: Sidedef[];
  sectors: Sector[];
  things: Thing[];
}

/** A wall texture: `width` columns of `height` palette indices, -1 where transparent. */
export interface Texture {
  width: number;
  height: number;
  pixels: Int16Array;
}

export const ML_BLOCKING = 1;
export const ML_DONTPEGTOP = 8;
export const ML_DONTPEGBOTTOM = 16;

export class WadError extends Error {}

const text8 = (b: Uint8Array, at: number) => {
  let s = "";
  for (let i = 0; i < 8; i++) {
    const c = b[at + i]!;
    if (c === 0) break;
    s += String.fromCharCode(c);
  }
  return s.toUpperCase();
};

export class Wad {
  readonly kind: "IWAD" | "PWAD";
  readonly lumps: Lump[] = [];
  private readonly view: DataView;
  private readonly bytes: Uint8Array;
  private patchNames: string[] | undefined;
  private textureDefs:
    | Map<string, { width: number; height: number; patches: Array<{ x: number; y: number; patch: number }> }>
    | undefined;
  private readonly textures = new Map<string, Texture | null>();
  private flats: Map<string, Uint8Array> | undefined;
  readonly palette: Uint8Array;

  constructor(buf: ArrayBuffer) {
    this.bytes = new Uint8Array(buf);
    this.view = new DataView(buf);
    if (buf.byteLength < 12) throw new WadError("the file is too short to be a WAD");
    const id = String.fromCharCode(...this.bytes.subarray(0, 4));
    if (id !== "IWAD" && id !== "PWAD")
      throw new WadError(`the file does not start with IWAD or PWAD (found ${JSON.stringify(id)})`);
    this.kind = id;
    const count = this.view.getInt32(4, true);
    const dir = this.view.getInt32(8, true);
    if (count < 0 || dir < 12 || dir + count * 16 > buf.byteLength)
      throw new WadError("the lump directory lies outside the file");
    for (let i = 0; i < count; i++) {
      const at = dir + i * 16;
      const offset = this.view.getInt32(at, true);
      const size = this.view.getInt32(at + 4, true);
      if (offset < 0 || size < 0 || offset + size > buf.byteLength)
        throw new WadError(`lump ${i} lies outside the file`);
      this.lumps.push({ name: text8(this.bytes, at + 8), offset, size });
    }
    const pal = this.lump("PLAYPAL");
    if (!pal || pal.length < 768) throw new WadError("no PLAYPAL palette");
    this.palette = pal.slice(0, 768);
  }

  index(name: string, from = 0): number {
    for (let i = from; i < this.lumps.length; i++) if (this.lumps[i]!.name === name) return i;
    return -1;
  }

  lump(name: string): Uint8Array | undefined {
    const i = this.index(name);
    return i < 0 ? undefined : this.data(i);
  }

  private data(i: number): Uint8Array {
    const l = this.lumps[i]!;
    return this.bytes.subarray(l.offset, l.offset + l.size);
  }

  /** The first map in the file: E1M1 (Doom, Freedoom Phase 1) or MAP01 (Doom II, Freedoom Phase 2), else the first ExMy/MAPxx. */
  firstMap(): string | undefined {
    for (const n of ["E1M1", "MAP01"]) if (this.index(n) >= 0) return n;
    return this.lumps.find((l) => /^(E\dM\d|MAP\d\d)$/.test(l.name))?.name;
  }

  map(name: string): DoomMap {
    const at = this.index(name);
    if (at < 0) throw new WadError(`no map ${name}`);
    const part = (lump: string, size: number) => {
      for (let i = at + 1; i < Math.min(at + 12, this.lumps.length); i++) {
        if (this.lumps[i]!.name === lump) {
          const d = this.data(i);
          return { d, n: Math.floor(d.length / size), v: new DataView(d.buffer, d.byteOffset, d.byteLength) };
        }
      }
      throw new WadError(`map ${name} has no ${lump}`);
    };
    const vx = part("VERTEXES", 4);
    const vertexes = Array.from({ length: vx.n }, (_, i) => ({
      x: vx.v.getInt16(i * 4, true),
      y: vx.v.getInt16(i * 4 + 2, true),
    }));
    const sd = part("SIDEDEFS", 30);
    const sidedefs = Array.from({ length: sd.n }, (_, i) => ({
      xoff: sd.v.getInt16(i * 30, true),
      yoff: sd.v.getInt16(i * 30 + 2, true),
      upper: text8(sd.d, i * 30 + 4),
      lower: text8(sd.d, i * 30 + 12),
      middle: text8(sd.d, i * 30 + 20),
      sector: sd.v.getUint16(i * 30 + 28, true),
    }));
    const ld = part("LINEDEFS", 14);
    const linedefs = Array.from({ length: ld.n }, (_, i) => {
      const left = ld.v.getUint16(i * 14 + 12, true);
      return {
        v1: ld.v.getUint16(i * 14, true),
        v2: ld.v.getUint16(i * 14 + 2, true),
        flags: ld.v.getUint16(i * 14 + 4, true),
        right: ld.v.getUint16(i * 14 + 10, true),
        left: left === 0xffff ? -1 : left,
      };
    }).filter(
      (l) => l.v1 < vertexes.length && l.v2 < vertexes.length && l.right < sidedefs.length && l.left < sidedefs.length,
    );
    const se = part("SECTORS", 26);
    const sectors = Array.from({ length: se.n }, (_, i) => ({
      floor: se.v.getInt16(i * 26, true),
      ceil: se.v.getInt16(i * 26 + 2, true),
      floorPic: text8(se.d, i * 26 + 4),
      ceilPic: text8(se.d, i * 26 + 12),
      light: se.v.getInt16(i * 26 + 20, true),
    }));
    const th = part("THINGS", 10);
    const things = Array.from({ length: th.n }, (_, i) => ({
      x: th.v.getInt16(i * 10, true),
      y: th.v.getInt16(i * 10 + 2, true),
      angle: th.v.getInt16(i * 10 + 4, true),
      type: th.v.getInt16(i * 10 + 6, true),
    }));
    return { name, vertexes, linedefs, sidedefs, sectors, things };
  }

  private loadTextureDefs(): void {
    this.textureDefs = new Map();
    const pn = this.lump("PNAMES");
    if (!pn) return;
    const pv = new DataView(pn.buffer, pn.byteOffset, pn.byteLength);
    const count = Math.min(pv.getInt32(0, true), Math.floor((pn.length - 4) / 8));
    this.patchNames = Array.from({ length: count }, (_, i) => text8(pn, 4 + i * 8));
    for (const lumpName of ["TEXTURE1", "TEXTURE2"]) {
      const t = this.lump(lumpName);
      if (!t) continue;
      const v = new DataView(t.buffer, t.byteOffset, t.byteLength);
      const n = v.getInt32(0, true);
      for (let i = 0; i < n && 4 + i * 4 < t.length; i++) {
        const o = v.getInt32(4 + i * 4, true);
        if (o + 22 > t.length) continue;
        const pc = v.getInt16(o + 20, true);
        const patches = [];
        for (let k = 0; k < pc && o + 22 + k * 10 + 10 <= t.length; k++) {
          patches.push({
            x: v.getInt16(o + 22 + k * 10, true),
            y: v.getInt16(o + 24 + k * 10, true),
            patch: v.getInt16(o + 26 + k * 10, true),
          });
        }
        this.textureDefs.set(text8(t, o), {
          width: v.getInt16(o + 12, true),
          height: v.getInt16(o + 14, true),
          patches,
        });
      }
    }
  }

  /** The composed texture `name`, or null when the WAD has none by that name ("-" is no texture). */
  texture(name: string): Texture | null {
    if (name === "-" || name === "") return null;
    const cached = this.textures.get(name);
    if (cached !== undefined) return cached;
    if (!this.textureDefs) this.loadTextureDefs();
    const def = this.textureDefs!.get(name);
    let tex: Texture | null = null;
    if (def && def.width > 0 && def.height > 0) {
      const pixels = new Int16Array(def.width * def.height).fill(-1);
      for (const p of def.patches) this.drawPatch(pixels, def.width, def.height, this.patchNames?.[p.patch], p.x, p.y);
      tex = { width: def.width, height: def.height, pixels };
    }
    this.textures.set(name, tex);
    return tex;
  }

  /** Draws a picture-format patch (columns of posts) into a column-major texture. */
  private drawPatch(out: Int16Array, w: number, h: number, name: string | undefined, ox: number, oy: number): void {
    const d = name ? this.lump(name) : undefined;
    if (!d || d.length < 8) return;
    const v = new DataView(d.buffer, d.byteOffset, d.byteLength);
    const pw = v.getUint16(0, true);
    for (let c = 0; c < pw && 8 + c * 4 + 4 <= d.length; c++) {
      const x = ox + c;
      let at = v.getUint32(8 + c * 4, true);
      for (let guard = 0; at < d.length && d[at] !== 0xff && guard < 256; guard++) {
        const top = d[at]!;
        const len = d[at + 1] ?? 0;
        for (let k = 0; k < len; k++) {
          const y = oy + top + k;
          if (x >= 0 && x < w && y >= 0 && y < h && at + 3 + k < d.length) out[x * h + y] = d[at + 3 + k]!;
        }
        at += len + 4;
      }
    }
  }

  /** The 64 × 64 flat `name` (palette indexes, row by row) between F_START and F_END; undefined when absent. */
  flat(name: string): Uint8Array | undefined {
    if (!this.flats) {
      this.flats = new Map();
      const s = this.lumps.findIndex((l) => l.name === "F_START" || l.name === "FF_START");
      const e = this.lumps.findIndex((l) => l.name === "F_END" || l.name === "FF_END");
      for (let i = s + 1; s >= 0 && i < e; i++)
        if (this.lumps[i]!.size === 4096) this.flats.set(this.lumps[i]!.name, this.data(i));
    }
    return this.flats.get(name);
  }
}
