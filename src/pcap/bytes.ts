/** Big-endian field reads that tolerate short input (missing bytes read as 0), and concatenation. */

export const u16be = (b: Uint8Array, off: number): number => ((b[off] ?? 0) << 8) | (b[off + 1] ?? 0);
export const u32be = (b: Uint8Array, off: number): number => u16be(b, off) * 65536 + u16be(b, off + 2);

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const p of parts) total += p.length;
  const out = new Uint8Array(total);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}
