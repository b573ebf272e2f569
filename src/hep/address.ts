/** MAC address text for HEP (IP address text lives in src/core/ip.ts). */

/** Six lower-case hex pairs separated by ":" from the six octets at `offset`. */
export function formatMac(bytes: Uint8Array, offset: number): string {
  let text = "";
  for (let i = 0; i < 6; i++) {
    const b = bytes[offset + i]!;
    text += (i === 0 ? "" : ":") + (b < 16 ? "0" : "") + b.toString(16);
  }
  return text;
}

/** Six octets of "aa:bb:cc:dd:ee:ff" (or "-" separated), or null. */
export function parseMac(text: string): Uint8Array | null {
  const parts = text.split(/[:-]/);
  if (parts.length !== 6 || !parts.every((p) => /^[0-9a-fA-F]{2}$/.test(p))) return null;
  return Uint8Array.from(parts, (p) => parseInt(p, 16));
}
