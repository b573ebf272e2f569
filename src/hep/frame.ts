/**
 * TCP stream framing for HEP3: packets are sent back to back and each one carries its total length
 * (header included) in octets 4-5, network order (spec: "total length", 6..65535). HEP v1/v2 carry no
 * total length and cannot be framed on a stream.
 */

// "HEP3" and "EEP3": the two ids the spec header allows.
const MAGIC_HEP = [0x48, 0x45, 0x50, 0x33] as const;
const MAGIC_EEP = [0x45, 0x45, 0x50, 0x33] as const;

/**
 * Length of the HEP3 packet starting at `offset`, once all of it is in `buf`; "need_more" while the
 * header or body is incomplete; "invalid" when the bytes cannot start a HEP3 packet (the caller
 * should drop the connection: a stream has no way to resynchronise).
 */
export function hepFrameLength(buf: Uint8Array, offset: number): number | "need_more" | "invalid" {
  const available = buf.length - offset;
  if (offset < 0 || available < 0) return "invalid";
  // Judge the id on as many octets as have arrived, so garbage is refused without waiting.
  const magic = buf[offset] === 0x45 ? MAGIC_EEP : MAGIC_HEP;
  const seen = Math.min(available, 4);
  for (let i = 0; i < seen; i++) if (buf[offset + i] !== magic[i]) return "invalid";
  if (available < 6) return "need_more";
  const length = (buf[offset + 4]! << 8) | buf[offset + 5]!;
  if (length < 6) return "invalid";
  return available < length ? "need_more" : length;
}
