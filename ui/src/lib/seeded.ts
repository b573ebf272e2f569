/**
 * mulberry32: a small seeded PRNG, so a sequence (a game round in the browser, a test's data or a
 * benchmark's targets) is the same on every run with the same seed. Not for anything secret.
 */
export function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
