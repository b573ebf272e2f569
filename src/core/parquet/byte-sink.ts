/**
 * A growable byte buffer the Thrift writers append to (thrift.ts ThriftWriter, thrift-tree.ts):
 * doubles when full, `bytes()` returns what was written.
 */
export class ByteSink {
  protected buf: Uint8Array;
  protected len = 0;

  constructor(initial = 256) {
    this.buf = new Uint8Array(initial);
  }

  /** Room for `n` more bytes. */
  protected ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  protected byte(b: number): void {
    this.ensure(1);
    this.buf[this.len++] = b;
  }

  protected append(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  /** A copy of the bytes written so far. */
  protected written(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}
