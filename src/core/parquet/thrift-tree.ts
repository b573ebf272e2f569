/**
 * Thrift compact protocol as a tree of fields (docs/STORAGE.md "Paged data files"): a Parquet
 * footer or page header read whole, some fields changed, and written back with every other field
 * as it was, including fields this code does not know. Integers keep their exact value (i64 as
 * bigint); booleans, bytes, lists and structs nest as read.
 */
import { ByteSink } from "./byte-sink.ts";
import { T } from "./thrift.ts";

export type ThriftValue = number | bigint | boolean | Uint8Array | ThriftStruct | ThriftList;

export interface ThriftField {
  type: number;
  value: ThriftValue;
}

/** A struct's fields by id, in the order read (written back in increasing id order). */
export type ThriftStruct = Map<number, ThriftField>;

export interface ThriftList {
  elementType: number;
  items: ThriftValue[];
}

const DOUBLE = 7;
const SET = 10;
const MAP = 11;

class Reader {
  constructor(
    readonly buf: Uint8Array,
    public at: number,
  ) {}

  byte(): number {
    if (this.at >= this.buf.length) throw new Error("thrift: truncated");
    return this.buf[this.at++]!;
  }

  varint(): bigint {
    let r = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const b = this.byte();
      r |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return r;
      if (shift > 63n) throw new Error("thrift: varint too long");
    }
  }

  zigzag(): bigint {
    const v = this.varint();
    return (v >> 1n) ^ -(v & 1n);
  }

  value(type: number): ThriftValue {
    switch (type) {
      case T.TRUE:
        return true;
      case T.FALSE:
        return false;
      case T.BYTE:
        return this.byte();
      case T.I16:
      case T.I32:
        return Number(this.zigzag());
      case T.I64:
        return this.zigzag();
      case DOUBLE: {
        const v = this.buf.slice(this.at, this.at + 8);
        this.at += 8;
        return v;
      }
      case T.BINARY: {
        const n = Number(this.varint());
        if (this.at + n > this.buf.length) throw new Error("thrift: truncated");
        const v = this.buf.slice(this.at, this.at + n);
        this.at += n;
        return v;
      }
      case T.LIST:
      case SET: {
        const head = this.byte();
        const elementType = head & 0x0f;
        const size = head >> 4 === 15 ? Number(this.varint()) : head >> 4;
        const items: ThriftValue[] = [];
        // A boolean element is one byte (1 true), unlike a boolean field.
        for (let i = 0; i < size; i++)
          items.push(elementType === T.TRUE || elementType === T.FALSE ? this.byte() === 1 : this.value(elementType));
        return { elementType, items };
      }
      case T.STRUCT:
        return this.struct();
      case MAP:
        throw new Error("thrift: maps are not used by Parquet metadata");
      default:
        throw new Error(`thrift: unknown type ${type}`);
    }
  }

  struct(): ThriftStruct {
    const fields: ThriftStruct = new Map();
    let last = 0;
    for (;;) {
      const head = this.byte();
      if (head === 0) return fields;
      const type = head & 0x0f;
      const delta = head >> 4;
      const id = delta === 0 ? Number(this.zigzag()) : last + delta;
      last = id;
      fields.set(id, { type, value: this.value(type) });
    }
  }
}

/** The struct starting at `at` of `buf`, and where it ends. */
export function readThriftStruct(buf: Uint8Array, at = 0): { struct: ThriftStruct; end: number } {
  const r = new Reader(buf, at);
  const struct = r.struct();
  return { struct, end: r.at };
}

class Writer extends ByteSink {
  constructor() {
    super(1024);
  }

  varint(v: bigint): void {
    while (v >= 0x80n) {
      this.byte(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    this.byte(Number(v));
  }

  zigzag(v: bigint): void {
    this.varint(v >= 0n ? v << 1n : (-v << 1n) - 1n);
  }

  value(type: number, v: ThriftValue): void {
    switch (type) {
      case T.TRUE:
      case T.FALSE:
        return;
      case T.BYTE:
        this.byte(Number(v) & 0xff);
        return;
      case T.I16:
      case T.I32:
      case T.I64:
        this.zigzag(BigInt(v as number | bigint));
        return;
      case DOUBLE:
        this.append(v as Uint8Array);
        return;
      case T.BINARY:
        this.varint(BigInt((v as Uint8Array).length));
        this.append(v as Uint8Array);
        return;
      case T.LIST:
      case SET: {
        const l = v as ThriftList;
        if (l.items.length < 15) this.byte((l.items.length << 4) | l.elementType);
        else {
          this.byte(0xf0 | l.elementType);
          this.varint(BigInt(l.items.length));
        }
        for (const item of l.items) {
          if (l.elementType === T.TRUE || l.elementType === T.FALSE) this.byte(item ? 1 : 2);
          else this.value(l.elementType, item);
        }
        return;
      }
      case T.STRUCT:
        this.struct(v as ThriftStruct);
        return;
      default:
        throw new Error(`thrift: cannot write type ${type}`);
    }
  }

  struct(s: ThriftStruct): void {
    let last = 0;
    for (const id of [...s.keys()].sort((a, b) => a - b)) {
      const f = s.get(id)!;
      // A boolean field's value is its type.
      const type = f.type === T.TRUE || f.type === T.FALSE ? (f.value ? T.TRUE : T.FALSE) : f.type;
      const delta = id - last;
      if (delta > 0 && delta <= 15) this.byte((delta << 4) | type);
      else {
        this.byte(type);
        this.zigzag(BigInt(id));
      }
      last = id;
      this.value(type, f.value);
    }
    this.byte(0);
  }

  finish(): Uint8Array {
    return this.written();
  }
}

export function writeThriftStruct(s: ThriftStruct): Uint8Array {
  const w = new Writer();
  w.struct(s);
  return w.finish();
}

/** A field's value as a struct (throws when it is something else or missing). */
export function structField(s: ThriftStruct, id: number): ThriftStruct {
  const f = s.get(id);
  if (!f || f.type !== T.STRUCT) throw new Error(`thrift: field ${id} is not a struct`);
  return f.value as ThriftStruct;
}

export function listField(s: ThriftStruct, id: number): ThriftList {
  const f = s.get(id);
  if (!f || f.type !== T.LIST) throw new Error(`thrift: field ${id} is not a list`);
  return f.value as ThriftList;
}

/** An integer field as a number (i16, i32, i64 below 2^53), undefined when absent. */
export function intField(s: ThriftStruct, id: number): number | undefined {
  const f = s.get(id);
  return f === undefined ? undefined : Number(f.value as number | bigint);
}

export function setInt(s: ThriftStruct, id: number, type: typeof T.I32 | typeof T.I64, v: number): void {
  s.set(id, { type, value: type === T.I64 ? BigInt(v) : v });
}
