/**
 * Thrift compact protocol, read by walking: a reader that wants a few fields of a big struct (the
 * page reader's index of a Parquet footer: 190 KB for an 800 k-row file, mostly statistics it never
 * uses) visits the fields in order, reads the ones it wants and skips the rest without building
 * them. thrift-tree.ts builds the whole tree (for a footer that is written back): the page
 * reader's index of such a footer took 6–9 ms with it, 1–3 ms with this (docs/BENCHMARKS.md
 * "Time-sliced row groups").
 * Integers are returned as numbers: Parquet's offsets, sizes and counts stay below 2^53.
 */
import { T } from "./thrift.ts";

const DOUBLE = 7;
const SET = 10;
const MAP = 11;

export class ThriftScan {
  constructor(
    readonly buf: Uint8Array,
    public at = 0,
  ) {}

  private byte(): number {
    if (this.at >= this.buf.length) throw new Error("thrift: truncated");
    return this.buf[this.at++]!;
  }

  private varint(): number {
    let r = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      const b = this.byte();
      r += (b & 0x7f) * mul;
      if (b < 0x80) return r;
      mul *= 128;
    }
    throw new Error("thrift: varint too long");
  }

  /** An i16, i32 or i64 field's value. */
  int(): number {
    const v = this.varint();
    // Zigzag without 32-bit operators (values above 2^31).
    return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
  }

  /** A binary field's bytes (a view of the buffer, not a copy). */
  binary(): Uint8Array {
    const n = this.varint();
    if (this.at + n > this.buf.length) throw new Error("thrift: truncated");
    const v = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return v;
  }

  /** A struct's fields in order: `on` reads a field's value, or returns false to have it skipped. */
  struct(on: (id: number, type: number) => boolean | undefined): void {
    let last = 0;
    for (;;) {
      const head = this.byte();
      if (head === 0) return;
      const type = head & 0x0f;
      const delta = head >> 4;
      const id = delta === 0 ? this.int() : last + delta;
      last = id;
      // Booleans carry their value in the type: nothing to read.
      if (type === T.TRUE || type === T.FALSE) {
        on(id, type);
        continue;
      }
      if (on(id, type) !== true) this.skip(type);
    }
  }

  /** A list's elements in order: `each` reads one (its value must be read, not skipped). */
  list(each: (index: number, elementType: number) => void): void {
    const head = this.byte();
    const elementType = head & 0x0f;
    const size = head >> 4 === 15 ? this.varint() : head >> 4;
    for (let i = 0; i < size; i++) each(i, elementType);
  }

  skip(type: number): void {
    switch (type) {
      case T.TRUE:
      case T.FALSE:
        return;
      case T.BYTE:
        this.at++;
        return;
      case T.I16:
      case T.I32:
      case T.I64:
        this.varint();
        return;
      case DOUBLE:
        this.at += 8;
        return;
      case T.BINARY:
        this.binary();
        return;
      case T.LIST:
      case SET:
        // A boolean element is one byte, unlike a boolean field.
        this.list((_i, t) => (t === T.TRUE || t === T.FALSE ? this.at++ : this.skip(t)));
        return;
      case T.STRUCT:
        this.struct(() => false);
        return;
      case MAP:
        throw new Error("thrift: maps are not used by Parquet metadata");
      default:
        throw new Error(`thrift: unknown type ${type}`);
    }
  }
}
