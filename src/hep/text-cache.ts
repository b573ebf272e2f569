/**
 * UTF-8 text of octet-string chunks. Agents repeat the same auth key (0x000e), node name (0x0013)
 * and labels in every packet, so a few recently seen byte strings are kept with their decoded text:
 * a hit costs a byte compare instead of a TextDecoder call (~80 ns) and returns a string already in
 * memory. Unique values (correlation id 0x0011) go through `decodeChunkText` directly.
 */
const utf8 = new TextDecoder();

/** Trailing NULs are dropped: C agents often send the string terminator inside the chunk. */
function trimNul(buf: Uint8Array, start: number, end: number): number {
  while (end > start && buf[end - 1] === 0) end--;
  return end;
}

export function decodeChunkText(buf: Uint8Array, start: number, end: number): string {
  return utf8.decode(buf.subarray(start, trimNul(buf, start, end)));
}

const SLOTS = 4;
/** Longer values are decoded without caching (they are unlikely to repeat and costly to compare). */
const MAX_CACHED = 128;

export class ChunkTextCache {
  private readonly keys: Uint8Array[] = [];
  private readonly values: string[] = [];
  private next = 0;

  get(buf: Uint8Array, start: number, end: number): string {
    end = trimNul(buf, start, end);
    const length = end - start;
    for (let s = 0; s < this.keys.length; s++) {
      const key = this.keys[s]!;
      if (key.length !== length) continue;
      let i = 0;
      while (i < length && key[i] === buf[start + i]) i++;
      if (i === length) return this.values[s]!;
    }
    const value = utf8.decode(buf.subarray(start, end));
    if (length <= MAX_CACHED) {
      this.keys[this.next] = buf.slice(start, end);
      this.values[this.next] = value;
      this.next = (this.next + 1) % SLOTS;
    }
    return value;
  }
}
