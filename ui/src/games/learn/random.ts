/** Shuffling for the games, drawn from the seeded PRNG (ui/src/lib/seeded.ts) so a round replays exactly. */
export { seeded as seededRandom } from "../../lib/seeded.ts";

/** A copy of `list` in a random order drawn from `rand` (Fisher-Yates). */
export function shuffled<T>(list: readonly T[], rand: () => number): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
