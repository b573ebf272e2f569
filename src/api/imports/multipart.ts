import { fail, ok, type Result } from "../../core/index.ts";

/**
 * multipart/form-data read as it arrives (RFC 7578, delimiters of RFC 2046 §5.1.1), so a capture
 * upload is written to a spool file piece by piece instead of being held whole (plus the copies
 * a FormData and an ArrayBuffer make) in memory. Pure: bytes in, part events out.
 */
export interface PartHeaders {
  /** `name` of Content-Disposition: form-data. */
  name: string;
  /** `filename`, when the part is a file. */
  filename?: string;
}

export interface PartSink {
  start(part: PartHeaders): void;
  /** A piece of the current part's body; valid only during the call. */
  data(bytes: Uint8Array): void | Promise<void>;
  end(): void | Promise<void>;
}

export type MultipartReason = "no_boundary" | "bad_headers" | "headers_too_large" | "unterminated";

/** The boundary parameter of a multipart/form-data Content-Type, or null. */
export function multipartBoundary(contentType: string): string | null {
  if (!/^multipart\/form-data\s*(;|$)/i.test(contentType.trim())) return null;
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType);
  return m ? (m[1] ?? m[2] ?? null) : null;
}

const MAX_HEADER_BYTES = 16 * 1024;
const CRLFCRLF = Buffer.from("\r\n\r\n");

export class MultipartReader {
  private readonly delimiter: Buffer;
  /** Bytes not yet handed on: at most one incoming chunk plus a delimiter's length. */
  private pending: Buffer = Buffer.from("\r\n");
  private state: "preamble" | "after_delimiter" | "headers" | "body" | "done" = "preamble";
  private failed: { reason: MultipartReason; detail: string } | null = null;

  constructor(
    boundary: string,
    private readonly sink: PartSink,
  ) {
    // The body's first delimiter has no CRLF before it; pending starts with one so every
    // delimiter looks the same.
    this.delimiter = Buffer.from(`\r\n--${boundary}`);
  }

  /** Feeds the next piece of the body; a failure is final. */
  async push(chunk: Uint8Array): Promise<Result<void, MultipartReason>> {
    if (this.failed) return fail(this.failed.reason, this.failed.detail);
    if (this.state === "done") return ok(undefined);
    this.pending = this.pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.pending, chunk]);
    for (;;) {
      const progressed = await this.step();
      const f = this.failed as { reason: MultipartReason; detail: string } | null;
      if (f !== null) return fail(f.reason, f.detail);
      if (!progressed) return ok(undefined);
    }
  }

  /** End of the body: the closing delimiter must have been seen. */
  finish(): Result<void, MultipartReason> {
    if (this.failed) return fail(this.failed.reason, this.failed.detail);
    return this.state === "done" ? ok(undefined) : fail("unterminated", "the body ends before the closing boundary");
  }

  /** One state transition over `pending`; false when more bytes are needed. */
  private async step(): Promise<boolean> {
    const buf = this.pending;
    switch (this.state) {
      case "preamble": {
        const i = buf.indexOf(this.delimiter);
        if (i < 0) {
          this.keepTail(buf, this.delimiter.length - 1);
          return false;
        }
        this.pending = buf.subarray(i + this.delimiter.length);
        this.state = "after_delimiter";
        return true;
      }
      case "after_delimiter": {
        if (buf.length < 2) return false;
        if (buf[0] === 0x2d && buf[1] === 0x2d) {
          this.state = "done";
          this.pending = Buffer.alloc(0);
          return false;
        }
        // Transport padding (RFC 2046: linear white space) may follow a delimiter before its CRLF.
        const eol = buf.indexOf("\r\n");
        if (eol < 0) return this.needMore(buf, 256, "bad_headers", "no line end after a boundary");
        if (buf.subarray(0, eol).some((b) => b !== 0x20 && b !== 0x09))
          return this.fail("bad_headers", "text after a boundary");
        this.pending = buf.subarray(eol + 2);
        this.state = "headers";
        return true;
      }
      case "headers": {
        // A form-data part always has Content-Disposition (RFC 7578 §4.2): a blank line at once is an error.
        if (buf.length >= 2 && buf[0] === 0x0d && buf[1] === 0x0a)
          return this.fail("bad_headers", "a part without Content-Disposition");
        const end = buf.indexOf(CRLFCRLF);
        if (end < 0)
          return this.needMore(
            buf,
            MAX_HEADER_BYTES,
            "headers_too_large",
            `part headers longer than ${MAX_HEADER_BYTES} bytes`,
          );
        const part = parsePartHeaders(buf.subarray(0, end).toString("utf8"));
        if (!part.ok) return this.fail(part.reason, part.detail ?? "bad part headers");
        this.sink.start(part.value);
        this.pending = buf.subarray(end + 4);
        this.state = "body";
        return true;
      }
      case "body": {
        const i = buf.indexOf(this.delimiter);
        if (i < 0) {
          // Everything but a tail that could be the start of the delimiter belongs to the part.
          const keep = Math.min(buf.length, this.delimiter.length - 1);
          if (buf.length > keep) await this.sink.data(buf.subarray(0, buf.length - keep));
          this.pending = Buffer.from(buf.subarray(buf.length - keep));
          return false;
        }
        if (i > 0) await this.sink.data(buf.subarray(0, i));
        await this.sink.end();
        this.pending = buf.subarray(i + this.delimiter.length);
        this.state = "after_delimiter";
        return true;
      }
      case "done":
        return false;
    }
  }

  private keepTail(buf: Buffer, n: number): void {
    this.pending = Buffer.from(buf.subarray(Math.max(0, buf.length - n)));
  }

  private needMore(buf: Buffer, max: number, reason: MultipartReason, detail: string): boolean {
    if (buf.length > max) return this.fail(reason, detail);
    return false;
  }

  private fail(reason: MultipartReason, detail: string): boolean {
    this.failed = { reason, detail };
    return false;
  }
}

/** Content-Disposition: form-data; name="…"; filename="…" (RFC 7578 §4.2). */
function parsePartHeaders(text: string): Result<PartHeaders, MultipartReason> {
  for (const line of text.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon < 0 || line.slice(0, colon).trim().toLowerCase() !== "content-disposition") continue;
    const value = line.slice(colon + 1);
    if (!/^\s*form-data\s*(;|$)/i.test(value)) return fail("bad_headers", "Content-Disposition is not form-data");
    const param = (key: string) => new RegExp(`;\\s*${key}=(?:"((?:[^"\\\\]|\\\\.)*)"|([^\\s;]*))`, "i").exec(value);
    const name = param("name");
    if (!name) return fail("bad_headers", "a part without a name");
    const file = param("filename");
    const unquote = (m: RegExpExecArray) => (m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : (m[2] ?? ""));
    return ok(file ? { name: unquote(name), filename: unquote(file) } : { name: unquote(name) });
  }
  return fail("bad_headers", "a part without Content-Disposition");
}
