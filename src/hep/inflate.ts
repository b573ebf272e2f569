/**
 * Inflation of the HEP3 compressed payload chunk 0x0010 ("captured compressed payload (gzip/inflate)").
 * The spec does not fix the container, so the three zlib framings are told apart by their first
 * octets: gzip (RFC 1952, 1f 8b), zlib (RFC 1950, CM = 8 and a header check divisible by 31), else
 * raw deflate (RFC 1951).
 */
import { gunzipSync, inflateRawSync, inflateSync } from "node:zlib";
import { fail, ok, type Result } from "../core/index.ts";

export function inflatePayload(data: Uint8Array, maxBytes: number): Result<Uint8Array, "gzip_failed"> {
  if (data.length === 0) return fail("gzip_failed", "empty compressed payload");
  const b0 = data[0]!;
  const b1 = data.length > 1 ? data[1]! : 0;
  const options = { maxOutputLength: maxBytes };
  try {
    let out: Uint8Array;
    if (b0 === 0x1f && b1 === 0x8b) out = gunzipSync(data, options);
    else if ((b0 & 0x0f) === 8 && ((b0 << 8) | b1) % 31 === 0) out = inflateZlibOrRaw(data, options);
    else out = inflateRawSync(data, options);
    // A plain Uint8Array view over the Buffer, so callers compare and slice it like any other payload.
    return ok(new Uint8Array(out.buffer, out.byteOffset, out.byteLength));
  } catch (e) {
    return fail("gzip_failed", e instanceof Error ? e.message : String(e));
  }
}

/** About 1 in 500 raw deflate streams happens to start with a valid zlib header: retry those as raw. */
function inflateZlibOrRaw(data: Uint8Array, options: { maxOutputLength: number }): Uint8Array {
  try {
    return inflateSync(data, options);
  } catch (e) {
    if (e instanceof Error && "code" in e && e.code === "ERR_BUFFER_TOO_LARGE") throw e;
    return inflateRawSync(data, options);
  }
}
