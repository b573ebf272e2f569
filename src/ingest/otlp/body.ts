/**
 * Reading an OTLP/HTTP body under the request cap and the in-flight budget (docs/OTLP.md
 * "Limits"). Like the line-protocol reader (src/ingest/lineproto/body.ts) it caps the bytes on
 * the wire and again once inflated (a small gzip bomb cannot blow memory), and in addition it
 * takes every byte from the budget as it arrives, each body chunk and each inflated chunk. A
 * declared Content-Length that does not fit now is refused before a byte is read; it is not
 * reserved, so a slow sender holds only what it has sent. The inflation is streamed so a body is
 * refused as soon as its inflated bytes no longer fit, not after they have all been allocated.
 */
import { createGunzip } from "node:zlib";
import { fail, ok, type Result } from "../../core/index.ts";
import type { BudgetLease } from "./budget.ts";

export type OtlpBodyFailure = "too_large" | "unsupported_encoding" | "bad_gzip" | "read_failed" | "throttled";

const THROTTLED = "the receiver is decoding as many bytes as ingest.otlp.max_inflight_bytes allows; retry later";

export async function readOtlpBody(
  req: Request,
  maxBytes: number,
  lease: BudgetLease,
): Promise<Result<Uint8Array, OtlpBodyFailure>> {
  const encoding = (req.headers.get("content-encoding") ?? "").trim().toLowerCase();
  const gzip = encoding === "gzip" || encoding === "x-gzip";
  if (!gzip && encoding !== "" && encoding !== "identity")
    return fail("unsupported_encoding", `Content-Encoding "${encoding}" is not supported (use gzip or none)`);
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (declared > maxBytes) return fail("too_large", `body of ${declared} bytes exceeds max_body_bytes ${maxBytes}`);
  // Refused before a byte is read: the client's retry costs us nothing.
  if (Number.isFinite(declared) && !lease.fits(declared)) return fail("throttled", THROTTLED);
  let raw: Uint8Array;
  try {
    const r = await readCapped(req, maxBytes, lease);
    if (!r.ok) return r;
    raw = r.value;
  } catch (e) {
    return fail("read_failed", `reading the body failed: ${(e as Error).message}`);
  }
  return gzip ? inflate(raw, maxBytes, lease) : ok(raw);
}

async function readCapped(
  req: Request,
  maxBytes: number,
  lease: BudgetLease,
): Promise<Result<Uint8Array, "too_large" | "throttled">> {
  if (!req.body) return ok(new Uint8Array(0));
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    const refuse =
      total > maxBytes
        ? fail("too_large", `body exceeds max_body_bytes ${maxBytes}`)
        : !lease.take(value.byteLength)
          ? fail("throttled", THROTTLED)
          : undefined;
    if (refuse) {
      void reader.cancel().catch(() => undefined);
      return refuse;
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

/** gzip → bytes, at most `maxBytes`, each chunk taken from the budget (zlib inflates off the JS thread). */
export function inflate(
  raw: Uint8Array,
  maxBytes: number,
  lease: BudgetLease,
): Promise<Result<Uint8Array, "too_large" | "bad_gzip" | "throttled">> {
  return new Promise((resolve) => {
    const z = createGunzip();
    const parts: Buffer[] = [];
    let total = 0;
    let settled = false;
    const settle = (r: Result<Uint8Array, "too_large" | "bad_gzip" | "throttled">) => {
      if (settled) return;
      settled = true;
      if (!r.ok) z.destroy();
      resolve(r);
    };
    z.on("data", (chunk: Buffer) => {
      if (settled) return;
      total += chunk.byteLength;
      if (total > maxBytes) return settle(fail("too_large", `gzip body inflates beyond max_body_bytes ${maxBytes}`));
      if (!lease.take(chunk.byteLength)) return settle(fail("throttled", THROTTLED));
      parts.push(chunk);
    });
    z.on("error", (e: Error) => settle(fail("bad_gzip", `gzip body could not be decompressed: ${e.message}`)));
    z.on("end", () => {
      const out = parts.length === 1 ? parts[0]! : Buffer.concat(parts, total);
      settle(ok(new Uint8Array(out.buffer, out.byteOffset, out.byteLength)));
    });
    z.end(raw);
  });
}
