/**
 * Reading a write body under the cap (docs/LINE-PROTOCOL.md "Receiver": `max_body_bytes`, over the cap → 413; gzip
 * `Content-Encoding` accepted). The cap holds for the bytes on the wire and again for the inflated
 * body, so a small gzip bomb cannot blow memory either.
 */
import { gunzip } from "node:zlib";
import { promisify } from "node:util";
import { fail, ok, type Result } from "../../core/index.ts";

const gunzipAsync = promisify(gunzip);

export type BodyFailure = "too_large" | "unsupported_encoding" | "bad_gzip" | "read_failed";

export async function readWriteBody(req: Request, maxBytes: number): Promise<Result<Uint8Array, BodyFailure>> {
  const encoding = (req.headers.get("content-encoding") ?? "").trim().toLowerCase();
  const gzip = encoding === "gzip" || encoding === "x-gzip";
  if (!gzip && encoding !== "" && encoding !== "identity")
    return fail("unsupported_encoding", `Content-Encoding "${encoding}" is not supported (use gzip or none)`);
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (declared > maxBytes) return fail("too_large", `body of ${declared} bytes exceeds max_body_bytes ${maxBytes}`);
  let raw: Uint8Array;
  try {
    const r = await readCapped(req, maxBytes);
    if (!r.ok) return r;
    raw = r.value;
  } catch (e) {
    return fail("read_failed", `reading the body failed: ${(e as Error).message}`);
  }
  if (!gzip) return ok(raw);
  try {
    // Off the JS thread (zlib's pool); maxOutputLength stops inflating at the cap.
    const out = await gunzipAsync(raw, { maxOutputLength: maxBytes });
    return ok(new Uint8Array(out.buffer, out.byteOffset, out.byteLength));
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === "ERR_BUFFER_TOO_LARGE")
      return fail("too_large", `gzip body inflates beyond max_body_bytes ${maxBytes}`);
    return fail("bad_gzip", `gzip body could not be decompressed: ${(e as Error).message}`);
  }
}

async function readCapped(req: Request, maxBytes: number): Promise<Result<Uint8Array, "too_large">> {
  if (!req.body) return ok(new Uint8Array(0));
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      void reader.cancel().catch(() => undefined);
      return fail("too_large", `body exceeds max_body_bytes ${maxBytes}`);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return ok(chunks[0]!);
  const out = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.byteLength;
  }
  return ok(out);
}
