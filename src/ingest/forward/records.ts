/**
 * The forward log's records of line protocol and OTLP (docs/DEPLOY.md "Forward protocol"): one
 * accepted request each, as the receiver got it, behind a one-line ASCII header with what the
 * central needs to build the same rows:
 *
 *   line_protocol: `lp1 <precision> <receive time, epoch ns> <db, URI-encoded, or ->\n<body>`
 *   otlp:          `otlp1 <signal> <protobuf|json> <receive time, epoch µs>\n<body (inflated)>`
 *
 * A record travels length-prefixed like a HEP packet (raw-batch.ts).
 */
const enc = new TextEncoder();
const dec = new TextDecoder();

export interface LpRecord {
  precision: string;
  nowNs: bigint;
  database: string | undefined;
  body: Uint8Array;
}

export interface OtlpRecord {
  signal: string;
  encoding: string;
  nowUs: number;
  body: Uint8Array;
}

function withHeader(header: string, body: Uint8Array): Uint8Array {
  const h = enc.encode(`${header}\n`);
  const out = new Uint8Array(h.length + body.length);
  out.set(h);
  out.set(body, h.length);
  return out;
}

/** The header's words and the body after it, or undefined without a header line (at most 512 bytes). */
function split(record: Uint8Array): { words: string[]; body: Uint8Array } | undefined {
  const nl = record.subarray(0, 512).indexOf(10);
  if (nl < 0) return undefined;
  return { words: dec.decode(record.subarray(0, nl)).split(" "), body: record.subarray(nl + 1) };
}

export function encodeLpRecord(r: LpRecord): Uint8Array {
  return withHeader(
    `lp1 ${r.precision} ${r.nowNs} ${r.database === undefined ? "-" : encodeURIComponent(r.database)}`,
    r.body,
  );
}

export function decodeLpRecord(record: Uint8Array): LpRecord | undefined {
  const s = split(record);
  const w = s?.words;
  if (!s || !w || w.length !== 4 || w[0] !== "lp1" || !/^(ns|us|ms|s)$/.test(w[1]!) || !/^\d{1,20}$/.test(w[2]!))
    return undefined;
  let database: string | undefined;
  try {
    database = w[3] === "-" ? undefined : decodeURIComponent(w[3]!);
  } catch {
    return undefined;
  }
  return { precision: w[1]!, nowNs: BigInt(w[2]!), database, body: s.body };
}

export function encodeOtlpRecord(r: OtlpRecord): Uint8Array {
  return withHeader(`otlp1 ${r.signal} ${r.encoding} ${Math.trunc(r.nowUs)}`, r.body);
}

export function decodeOtlpRecord(record: Uint8Array): OtlpRecord | undefined {
  const s = split(record);
  const w = s?.words;
  if (
    !s ||
    !w ||
    w.length !== 4 ||
    w[0] !== "otlp1" ||
    !/^(traces|metrics|logs)$/.test(w[1]!) ||
    !/^(protobuf|json)$/.test(w[2]!) ||
    !/^\d{1,17}$/.test(w[3]!)
  )
    return undefined;
  return { signal: w[1]!, encoding: w[2]!, nowUs: Number(w[3]), body: s.body };
}
