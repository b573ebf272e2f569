/**
 * Shared by the line-protocol integration tests: the appliance with the receiver on, writes over
 * HTTP, and reading a table back with SQL.
 */
import type { Lake } from "../../src/lake/index.ts";
import { startWithApi, type ApiAppliance } from "./export-helpers.ts";

export type Json = Record<string, unknown>;

/** The appliance with the receiver enabled (`lp` = `ingest.line_protocol` overrides) and an admin API client. */
export async function startLineProtocol(
  dir: string,
  lp: Json = {},
  overrides: Json = {},
): Promise<ApiAppliance & { lpUrl: string }> {
  const s = await startWithApi(dir, {
    ...overrides,
    ingest: {
      ...((overrides.ingest as Json | undefined) ?? {}),
      line_protocol: { listen: "127.0.0.1:0", enable: true, ...lp },
    },
  });
  return Object.assign(s, { lpUrl: s.a.app.lineProtocol!.url() });
}

export interface WriteResult {
  status: number;
  headers: Headers;
  body:
    | {
        error?: string;
        written?: number;
        lines?: Array<{ line: number; column?: number; key?: string; reason: string; message: string }>;
      }
    | undefined;
}

/** POST a body to a receiver path (`/write?db=x`, `/api/v2/write?bucket=x`…). */
export async function lpWrite(
  base: string,
  pathAndQuery: string,
  body: string | Uint8Array,
  headers: Record<string, string> = {},
): Promise<WriteResult> {
  const r = await fetch(`${base}${pathAndQuery}`, {
    method: "POST",
    body: typeof body === "string" ? body : Buffer.from(body),
    headers,
  });
  const text = await r.text();
  return { status: r.status, headers: r.headers, body: text ? (JSON.parse(text) as WriteResult["body"]) : undefined };
}

/** Every row of a table (time as epoch µs in `time_us`), after making accepted rows queryable. */
export async function tableRows(lake: Lake, schema: string, table: string, order = "time_us"): Promise<Json[]> {
  await lake.sync();
  const r = await lake.query(
    `SELECT epoch_us("time") AS time_us, * EXCLUDE ("time") FROM svc_lake."${schema}"."${table}" ORDER BY ${order}`,
  );
  return r.rows;
}

/** The value of one sample of a Prometheus text exposition (0 when absent). */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const m = /^([^{\s]+)(?:\{([^}]*)\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = (m[2] ?? "").split(",").filter(Boolean);
    if (want.every((w) => have.includes(w))) return Number(m[3]);
  }
  return 0;
}
