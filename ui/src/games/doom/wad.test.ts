/**
 * The WAD reader and the walkable world on a WAD built here byte by byte (the documented format):
 * one square room with a textured wall. The Freedoom IWAD is booted in Chromium
 * (test/e2e/ui-games-doom.test.ts).
 */
import { describe, expect, test } from "bun:test";
import { Wad, WadError } from "./wad.ts";
import { RADIUS, World } from "./world.ts";

const name8 = (s: string) => {
  const b = new Uint8Array(8);
  for (let i = 0; i < s.length; i++) b[i] = s.charCodeAt(i);
  return b;
};
const le = (bits: 16 | 32, ...ns: number[]) => {
  const b = new Uint8Array(ns.length * (bits / 8));
  const v = new DataView(b.buffer);
  ns.forEach((n, i) => (bits === 16 ? v.setInt16(i * 2, n, true) : v.setInt32(i * 4, n, true)));
  return b;
};
const cat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, at), (at += p.length);
  return out;
};

/** A 4 × 2 patch: column c, row r holds palette index 10 + c * 2 + r. */
function patch(): Uint8Array {
  const cols = [0, 1, 2, 3].map((c) => cat(new Uint8Array([0, 2, 0, 10 + c * 2, 11 + c * 2, 0, 0xff])));
  const head = cat(le(16, 4, 2, 0, 0), le(32, ...cols.map((_, i) => 8 + 16 + i * 7)));
  return cat(head, ...cols);
}

function buildWad(): ArrayBuffer {
  const playpal = new Uint8Array(768);
  for (let i = 0; i < 256; i++) playpal.set([i, 255 - i, (i * 7) % 256], i * 3);
  const lumps: Array<[string, Uint8Array]> = [
    ["PLAYPAL", playpal],
    ["PNAMES", cat(le(32, 1), name8("P1"))],
    [
      "TEXTURE1",
      cat(le(32, 1, 8), name8("WALL"), le(32, 0), le(16, 4, 2), le(32, 0), le(16, 1), le(16, 0, 0, 0, 1, 0)),
    ],
    ["P1", patch()],
    ["E1M1", new Uint8Array()],
    ["THINGS", le(16, 0, 0, 90, 1, 7)],
    [
      "LINEDEFS",
      cat(
        ...[
          [0, 1],
          [1, 2],
          [2, 3],
          [3, 0],
        ].map(([a, b], i) => le(16, a!, b!, 1, 0, 0, i, -1)),
      ),
    ],
    ["SIDEDEFS", cat(...[0, 1, 2, 3].map(() => cat(le(16, 0, 0), name8("-"), name8("-"), name8("WALL"), le(16, 0))))],
    ["VERTEXES", le(16, -128, -128, -128, 128, 128, 128, 128, -128)],
    ["SECTORS", cat(le(16, 0, 128), name8("FLOOR"), name8("F_SKY1"), le(16, 255, 0, 0))],
  ];
  let at = 12;
  const dir: Uint8Array[] = [];
  for (const [n, d] of lumps) {
    dir.push(cat(le(32, at, d.length), name8(n)));
    at += d.length;
  }
  return cat(new TextEncoder().encode("IWAD"), le(32, lumps.length, at), ...lumps.map(([, d]) => d), ...dir)
    .buffer as ArrayBuffer;
}

describe("WAD reader", () => {
  test("directory, map lumps and a texture composed from its patch", () => {
    const wad = new Wad(buildWad());
    expect(wad.kind).toBe("IWAD");
    expect(wad.firstMap()).toBe("E1M1");
    const map = wad.map("E1M1");
    expect(map.vertexes).toEqual([
      { x: -128, y: -128 },
      { x: -128, y: 128 },
      { x: 128, y: 128 },
      { x: 128, y: -128 },
    ]);
    expect(map.linedefs.map((l) => [l.v1, l.v2, l.right, l.left])).toEqual([
      [0, 1, 0, -1],
      [1, 2, 1, -1],
      [2, 3, 2, -1],
      [3, 0, 3, -1],
    ]);
    expect(map.sectors).toEqual([{ floor: 0, ceil: 128, floorPic: "FLOOR", ceilPic: "F_SKY1", light: 255 }]);
    expect(map.things).toEqual([{ x: 0, y: 0, angle: 90, type: 1 }]);
    const tex = wad.texture("WALL")!;
    expect([tex.width, tex.height]).toEqual([4, 2]);
    expect([...tex.pixels]).toEqual([10, 11, 12, 13, 14, 15, 16, 17]);
    expect(wad.texture("-")).toBeNull();
    expect(wad.texture("NOPE")).toBeNull();
  });

  test("files that are not WADs are refused with the reason", () => {
    expect(() => new Wad(new TextEncoder().encode("PK\u0003\u0004 this is a zip").buffer as ArrayBuffer)).toThrow(
      new WadError('the file does not start with IWAD or PWAD (found "PK\\u0003\\u0004")'),
    );
    expect(() => new Wad(cat(new TextEncoder().encode("IWAD"), le(32, 5, 9999)).buffer as ArrayBuffer)).toThrow(
      "the lump directory lies outside the file",
    );
  });
});

describe("world", () => {
  test("spawns on player 1's start, draws walls with the palette, and walls stop the player", () => {
    const wad = new Wad(buildWad());
    const w = new World(wad, wad.map("E1M1"));
    expect(w.player).toEqual({ x: 0, y: 0, angle: Math.PI / 2 });
    expect(w.sectorAt(0, 0)?.floor).toBe(0);
    const img = { width: 64, height: 40, data: new Uint8ClampedArray(64 * 40 * 4) } as unknown as ImageData;
    w.render(img);
    const colours = new Set<string>();
    for (let i = 0; i < img.data.length; i += 4) colours.add(`${img.data[i]},${img.data[i + 1]},${img.data[i + 2]}`);
    // The floor (no FLOOR flat in this WAD: neutral grey) and the wall's palette colours
    // (indexes 10-17: red 10-17, green 238-245), lit at full level near the player.
    expect(colours.has("96,96,96")).toBe(true);
    expect([...colours].some((c) => /^1[0-7],2(3[89]|4[0-5]),/.test(c))).toBe(true);
    // Walking north 400 units ends one radius short of the north wall.
    for (let i = 0; i < 50; i++) w.move(8, 0, 0);
    expect(w.player.y).toBeLessThanOrEqual(128 - RADIUS);
    expect(w.player.y).toBeGreaterThan(128 - RADIUS - 8);
    w.move(0, 0, Math.PI / 2);
    for (let i = 0; i < 50; i++) w.move(8, 0, 0);
    expect(w.player.x).toBeGreaterThanOrEqual(-128 + RADIUS);
    expect(w.player.x).toBeLessThan(-128 + RADIUS + 8);
  });
});
