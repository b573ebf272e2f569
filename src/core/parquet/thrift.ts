/**
 * Thrift compact protocol, write side only: what a Parquet footer and page header need
 * (docs/STORAGE.md "Parquet written by svc"). Field headers carry the id delta when it is 1..15,
 * integers are zigzag varints, a struct ends with a 0 byte.
 */
import { ByteSink } from "./byte-sink.ts";

export const T = {
  TRUE: 1,
  FALSE: 2,
  BYTE: 3,
  I16: 4,
  I32: 5,
  I64: 6,
  BINARY: 8,
  LIST: 9,
  STRUCT: 12,
} as const;

const encoder = new TextEncoder();

export class ThriftWriter extends ByteSink {
  private last = 0;
  private readonly stack: number[] = [];

  /** Unsigned varint of a non-negative integer below 2^53. */
  private varint(v: number): void {
    this.ensure(10);
    while (v >= 0x80) {
      this.buf[this.len++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.len++] = v;
  }

  /** Zigzag varint of an integer in ±2^52. */
  private zigzag(v: number): void {
    this.varint(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  private header(id: number, type: number): void {
    const delta = id - this.last;
    if (delta > 0 && delta <= 15) this.byte((delta << 4) | type);
    else {
      this.byte(type);
      this.zigzag(id);
    }
    this.last = id;
  }

  i32(id: number, v: number): this {
    this.header(id, T.I32);
    this.zigzag(v);
    return this;
  }

  i16(id: number, v: number): this {
    this.header(id, T.I16);
    this.zigzag(v);
    return this;
  }

  i8(id: number, v: number): this {
    this.header(id, T.BYTE);
    this.byte(v & 0xff);
    return this;
  }

  i64(id: number, v: number): this {
    this.header(id, T.I64);
    this.zigzag(v);
    return this;
  }

  bool(id: number, v: boolean): this {
    this.header(id, v ? T.TRUE : T.FALSE);
    return this;
  }

  binary(id: number, v: Uint8Array): this {
    this.header(id, T.BINARY);
    this.varint(v.length);
    this.append(v);
    return this;
  }

  string(id: number, v: string): this {
    return this.binary(id, encoder.encode(v));
  }

  /** Opens a struct field; close it with end(). */
  struct(id: number): this {
    this.header(id, T.STRUCT);
    this.stack.push(this.last);
    this.last = 0;
    return this;
  }

  /** Closes the struct opened last (or a list element). */
  end(): this {
    this.byte(0);
    this.last = this.stack.pop() ?? 0;
    return this;
  }

  /** A list field header of `size` elements of `type`; write the elements next. */
  list(id: number, type: number, size: number): this {
    this.header(id, T.LIST);
    if (size < 15) this.byte((size << 4) | type);
    else {
      this.byte(0xf0 | type);
      this.varint(size);
    }
    return this;
  }

  /** A struct element of a list: its fields follow, then end(). */
  element(): this {
    this.stack.push(this.last);
    this.last = 0;
    return this;
  }

  i32Element(v: number): this {
    this.zigzag(v);
    return this;
  }

  stringElement(v: string): this {
    const b = encoder.encode(v);
    this.varint(b.length);
    this.append(b);
    return this;
  }

  /** The bytes of a top-level struct: its fields and the stop byte. */
  finish(): Uint8Array {
    this.byte(0);
    return this.written();
  }
}
