/**
 * A check of a protobuf body's wire encoding before protobufjs decodes it (docs/OTLP.md "HTTP",
 * "What is kept, and when it is answered"). protobufjs accepts a varint whose tenth byte carries
 * bits beyond 64 (it drops them, so an int64 attribute silently changes value) and skips an unknown
 * varint field of any length; protobuf allows neither: a varint has at most 10 bytes and at most 64
 * bits. This walk, guided by the schema of proto.ts, rejects both, a length past its message,
 * and wire types OTLP never sends (groups 3 and 4, 6 and 7), so such a body is a 400 /
 * INVALID_ARGUMENT rather than a 200. It allocates nothing and reads every byte once.
 */
import type protobuf from "protobufjs";

/** Nesting of messages at most: protobufjs' own recursion limit, so a body this walk passes still decodes. */
const MAX_DEPTH = 100;

class WireError extends Error {}

/** Scalar types encoded as varints (wire type 0, or packed in a length-delimited field). */
const VARINT_TYPES = new Set(["int32", "int64", "uint32", "uint64", "sint32", "sint64", "bool"]);

interface Cursor {
  buf: Uint8Array;
  pos: number;
}

/** Reads one varint; throws when it has more than 10 bytes, bits beyond 64, or runs past `end`. */
function varint(c: Cursor, end: number): number {
  // Most varints (tags, short lengths) are one byte.
  if (c.pos < end && c.buf[c.pos]! < 0x80) return c.buf[c.pos++]!;
  let value = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    if (c.pos >= end) throw new WireError(`a varint runs past the end of its message at byte ${c.pos}`);
    const b = c.buf[c.pos++]!;
    if (i === 9 && b >= 0x80) throw new WireError(`a varint at byte ${c.pos - 10} is longer than 10 bytes`);
    // The tenth byte holds bit 63 only: anything more overflows 64 bits.
    if (i === 9 && b > 1) throw new WireError(`a varint at byte ${c.pos - 10} overflows 64 bits`);
    value += (b & 0x7f) * mul;
    mul *= 128;
    if (b < 0x80) return value;
  }
  throw new WireError("unreachable: the tenth byte ends every varint");
}

/** Per message type and field number: the nested message type, or whether a packed field holds varints. */
interface FieldShape {
  message?: protobuf.Type;
  packedVarints: boolean;
}
const SHAPES = new WeakMap<protobuf.Type, Map<number, FieldShape | undefined>>();

function shapeOf(type: protobuf.Type, fieldNo: number): FieldShape | undefined {
  let byNo = SHAPES.get(type);
  if (!byNo) SHAPES.set(type, (byNo = new Map()));
  if (byNo.has(fieldNo)) return byNo.get(fieldNo);
  const field = type.fieldsById[fieldNo];
  const resolved = field?.resolve().resolvedType;
  const shape = field
    ? {
        ...(resolved && "fieldsById" in resolved ? { message: resolved as protobuf.Type } : {}),
        packedVarints: field.repeated && VARINT_TYPES.has(field.type),
      }
    : undefined;
  byNo.set(fieldNo, shape);
  return shape;
}

function walk(c: Cursor, end: number, type: protobuf.Type | undefined, depth: number): void {
  if (depth > MAX_DEPTH) throw new WireError(`messages nest deeper than ${MAX_DEPTH} levels`);
  while (c.pos < end) {
    const tag = varint(c, end);
    const fieldNo = Math.floor(tag / 8);
    const wire = tag % 8;
    if (fieldNo === 0 || fieldNo > 0x1fffffff) throw new WireError(`invalid field number ${fieldNo} at byte ${c.pos}`);
    switch (wire) {
      case 0:
        varint(c, end);
        break;
      case 1:
      case 5: {
        const n = wire === 1 ? 8 : 4;
        if (c.pos + n > end)
          throw new WireError(`a fixed-size field runs past the end of its message at byte ${c.pos}`);
        c.pos += n;
        break;
      }
      case 2: {
        const len = varint(c, end);
        const stop = c.pos + len;
        if (stop > end)
          throw new WireError(`a length of ${len} bytes at byte ${c.pos} runs past the end of its message`);
        const shape = type ? shapeOf(type, fieldNo) : undefined;
        if (shape?.message) walk(c, stop, shape.message, depth + 1);
        else if (shape?.packedVarints) while (c.pos < stop) varint(c, stop);
        c.pos = stop;
        break;
      }
      default:
        throw new WireError(`wire type ${wire} at byte ${c.pos} is not used by OTLP`);
    }
  }
}

/** Undefined when the body's wire encoding is sound for `type`, else why not. */
export function checkWire(type: protobuf.Type, body: Uint8Array): string | undefined {
  try {
    walk({ buf: body, pos: 0 }, body.byteLength, type, 0);
    return undefined;
  } catch (e) {
    if (e instanceof WireError) return e.message;
    throw e;
  }
}
