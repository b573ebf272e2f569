/**
 * SIP over a byte stream (TCP, TLS): messages are cut by Content-Length, which is mandatory on
 * stream transports (RFC 3261 §18.3); CRLF keep-alives between messages are skipped (RFC 5626 §3.5.1).
 */

/** Largest message accepted before the connection is considered broken. */
export const MAX_STREAM_MESSAGE = 65_535;

export class StreamFramer {
  private buf = "";

  /** Appends received text; returns the complete messages, or null when the stream is not SIP. */
  push(text: string): string[] | null {
    this.buf += text;
    const out: string[] = [];
    for (;;) {
      const start = this.buf.search(/[^\r\n]/);
      if (start < 0) {
        this.buf = "";
        return out;
      }
      if (start > 0) this.buf = this.buf.slice(start);
      const headEnd = this.buf.indexOf("\r\n\r\n");
      if (headEnd < 0) return this.buf.length > MAX_STREAM_MESSAGE ? null : out;
      const head = this.buf.slice(0, headEnd);
      const m = /^(?:content-length|l)[ \t]*:[ \t]*(\d+)/im.exec(head);
      if (!m) return null; // §18.3: a stream message without Content-Length cannot be framed
      // Content-Length counts bytes; the loadgen's own messages and sipp's are ASCII/UTF-8 bodies.
      const bodyLen = Number(m[1]);
      const total = headEnd + 4 + bodyLen;
      if (total > MAX_STREAM_MESSAGE) return null;
      if (Buffer.byteLength(this.buf) < Buffer.byteLength(head) + 4 + bodyLen) return out;
      const body = Buffer.from(this.buf.slice(headEnd + 4))
        .subarray(0, bodyLen)
        .toString();
      out.push(`${head}\r\n\r\n${body}`);
      this.buf = this.buf.slice(headEnd + 4 + body.length);
    }
  }
}
