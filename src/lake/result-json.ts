/**
 * DuckDB results as JSON-friendly rows (engine.ts): 64-bit integers as numbers when they fit, and
 * a floor of a chunk's JSON size read from DuckDB's vectors before anything is converted.
 */
import type { DuckDBDataChunk, DuckDBResultReader, DuckDBType, DuckDBValue } from "@duckdb/node-api";
import type { Type, Vector } from "@duckdb/node-bindings";
import { duckDbBindings, duckDbLoaded } from "./duckdb.ts";

/**
 * A lower bound of the JSON bytes of a chunk's values, read from DuckDB's vectors without
 * converting any value: every value, list element and struct member is at least one byte of JSON
 * ("1", "null"), a string at least its length (the length field of each 16-byte string_t). Nested
 * types are walked through their child vectors: a LIST's or MAP's child holds all the chunk's
 * elements (list_vector_get_size), an ARRAY's child rows × the array size. Stops once `stopAt`
 * is reached, so the walk costs at most that many steps however large the values are.
 */
export function chunkJsonFloor(chunk: DuckDBDataChunk, stopAt: number): number {
  const { data_chunk_get_vector } = duckDbBindings();
  let total = 0;
  for (let c = 0; c < chunk.columnCount && total < stopAt; c++) {
    const vector = data_chunk_get_vector(chunk.chunk, c);
    total += vectorJsonFloor(vector, chunk.rowCount, stopAt - total);
  }
  return total;
}

let STRING_STORAGE: Set<Type> | undefined;

function vectorJsonFloor(vector: Vector, count: number, stopAt: number): number {
  if (count >= stopAt) return count;
  const b = duckDbBindings();
  const {
    array_type_array_size,
    array_vector_get_child,
    get_type_id,
    list_vector_get_child,
    list_vector_get_size,
    struct_type_child_count,
    struct_vector_get_child,
  } = b;
  const { Type, validity_row_is_valid, vector_get_column_type, vector_get_data, vector_get_validity } = b;
  STRING_STORAGE ??= new Set<Type>([Type.VARCHAR, Type.BLOB, Type.BIT, Type.BIGNUM, Type.GEOMETRY]);
  const type = vector_get_column_type(vector);
  const id = get_type_id(type);
  if (STRING_STORAGE.has(id)) {
    let total = count;
    const data = vector_get_data(vector, count * 16);
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    const validity = vector_get_validity(vector, Math.ceil(count / 64) * 8);
    for (let i = 0; i < count && total < stopAt; i++)
      if (validity_row_is_valid(validity, i)) total += view.getUint32(i * 16, true);
    return total;
  }
  if (id === Type.LIST || id === Type.MAP)
    return count + vectorJsonFloor(list_vector_get_child(vector), list_vector_get_size(vector), stopAt - count);
  if (id === Type.ARRAY)
    return count + vectorJsonFloor(array_vector_get_child(vector), count * array_type_array_size(type), stopAt - count);
  if (id === Type.STRUCT || id === Type.UNION) {
    let total = count;
    const members = struct_type_child_count(type);
    for (let m = 0; m < members && total < stopAt; m++)
      total += vectorJsonFloor(struct_vector_get_child(vector, m), count, stopAt - total);
    return total;
  }
  return count;
}

/** The chunk's rows as objects of JSON-friendly values (what getRowObjectsJson gives for a whole result). */
export function rowObjects(chunk: DuckDBDataChunk, names: string[]): Record<string, unknown>[] {
  const { JsonDuckDBValueConverter } = duckDbLoaded();
  const out: Record<string, unknown>[] = [];
  for (let r = 0; r < chunk.rowCount; r++) {
    const row: Record<string, unknown> = {};
    chunk.visitRowValues(r, (value: DuckDBValue, _row: number, column: number, type: DuckDBType) => {
      row[names[column] ?? String(column)] = JsonDuckDBValueConverter(value, type, JsonDuckDBValueConverter);
    });
    out.push(row);
  }
  return out;
}

/** Built at the first result: the driver is loaded by then (src/lake/duckdb.ts). */
let WIDE_INTS: Set<number> | undefined;
const wideInts = (): Set<number> => {
  const { DuckDBTypeId } = duckDbLoaded();
  WIDE_INTS ??= new Set<number>([
    DuckDBTypeId.BIGINT,
    DuckDBTypeId.UBIGINT,
    DuckDBTypeId.HUGEINT,
    DuckDBTypeId.UHUGEINT,
  ]);
  return WIDE_INTS;
};

/** getRowObjectsJson renders 64-bit integers as strings; numbers are friendlier when they fit. */
export function jsonRows(reader: DuckDBResultReader): Record<string, unknown>[] {
  return widenInts(reader.getRowObjectsJson() as Record<string, unknown>[], reader.columnNames(), reader.columnTypes());
}

export function widenInts(
  rows: Record<string, unknown>[],
  names: string[],
  types: DuckDBType[],
): Record<string, unknown>[] {
  const wide = types
    .map((t, i) => (wideInts().has(t.typeId) ? names[i] : undefined))
    .filter((n): n is string => n !== undefined);
  if (wide.length === 0) return rows;
  for (const row of rows) {
    for (const k of wide) {
      const v = row[k];
      if (typeof v === "string") {
        const n = Number(v);
        if (Number.isSafeInteger(n)) row[k] = n;
      }
    }
  }
  return rows;
}
