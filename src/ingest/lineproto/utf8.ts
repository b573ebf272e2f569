/**
 * Request bodies arrive as bytes. The reference decoder rejects a token holding invalid UTF-8
 * ("invalid utf-8 sequence in token"); a plain TextDecoder would silently turn those bytes into
 * U+FFFD and the point would be accepted. So the body is decoded strictly first (the fast path,
 * native); only when that fails is it rebuilt with one U+FFFD per invalid byte, remembering where
 * each replacement sits so the parser can reject exactly the tokens that contained one. ASCII
 * bytes (every delimiter of the protocol) are never part of an invalid sequence, so the structure
 * of the body is unchanged.
 */

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Decoded body; `badOffsets` (ascending UTF-16 offsets of replaced bytes) is null for valid UTF-8. */
export type DecodedBody = { text: string; badOffsets: number[] | null };

export function decodeBody(bytes: Uint8Array): DecodedBody {
  try {
    return { text: strict.decode(bytes), badOffsets: null };
  } catch {
    return decodeMarkingInvalid(bytes);
  }
}

function decodeMarkingInvalid(bytes: Uint8Array): DecodedBody {
  const parts: string[] = [];
  const badOffsets: number[] = [];
  let length = 0;
  let runStart = 0;
  while (runStart <= bytes.length) {
    const bad = firstInvalidUtf8(bytes, runStart, bytes.length);
    const runEnd = bad < 0 ? bytes.length : bad;
    const run = strict.decode(bytes.subarray(runStart, runEnd));
    parts.push(run);
    length += run.length;
    if (bad < 0) break;
    badOffsets.push(length);
    parts.push("\uFFFD");
    length += 1;
    runStart = bad + 1;
  }
  return { text: parts.join(""), badOffsets };
}

/** True when some offset in the ascending list lies in [start, end). */
export function hasOffsetIn(offsets: number[], start: number, end: number): boolean {
  let lo = 0;
  let hi = offsets.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (offsets[mid]! < start) lo = mid + 1;
    else hi = mid;
  }
  return lo < offsets.length && offsets[lo]! < end;
}

/**
 * Index of the first byte that does not start a well-formed UTF-8 sequence in bytes[start, end),
 * or -1. Well-formed per RFC 3629 (what Go's utf8.Valid checks): no overlong forms, no surrogates,
 * nothing above U+10FFFF, no truncated or stray continuation bytes.
 */
export function firstInvalidUtf8(bytes: Uint8Array, start: number, end: number): number {
  let i = start;
  while (i < end) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      else if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      else if (b === 0xf4) hi = 0x8f;
    } else return i;
    if (i + need >= end) return i; // truncated sequence
    const b1 = bytes[i + 1]!;
    if (b1 < lo || b1 > hi) return i;
    for (let k = 2; k <= need; k++) {
      const bk = bytes[i + k]!;
      if (bk < 0x80 || bk > 0xbf) return i;
    }
    i += need + 1;
  }
  return -1;
}
