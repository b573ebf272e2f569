/**
 * A live appliance with real SIP calls ingested as HEP over UDP, for the natural-language tests
 * (docs/MCP.md): `POST /mcp/query`, the tools of `svc mcp` and the tools at `/mcp`.
 */
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import type { TestAppliance } from "../appliance.ts";
import { invite, request, response } from "../fixtures/sip.ts";
import { waitFor } from "../harness.ts";

export const PASSWORD = "mcp-test-password";

export interface Calls {
  /** INVITE 1001 → 2002, 10.31.0.1 → 10.31.0.2 (plus 200 OK and BYE). */
  invite: string;
  /** OPTIONS 3003 → 4004, 10.32.0.1 → 10.32.0.2 (the `default` table), then INVITE and CANCEL of the same Call-ID. */
  options: string;
  /** INVITE 5005 → 6006 whose Call-ID holds words the SQL validator refuses as identifiers. */
  tricky: string;
  t0Ms: number;
}

export async function ingestCalls(a: TestAppliance): Promise<Calls> {
  const id = crypto.randomUUID().slice(0, 8);
  const calls: Calls = {
    invite: `mcp-a-${id}@pbx`,
    options: `mcp-b-${id}@pbx`,
    tricky: `drop-table-insert-copy-${id}@pbx`,
    t0Ms: Date.now() - 10 * 60_000,
  };
  const hep = (payload: string, atMs: number, src: string, dst: string) =>
    encodeHep3({
      srcIp: src,
      dstIp: dst,
      srcPort: 5060,
      dstPort: 5060,
      timestampUs: (calls.t0Ms + atMs) * 1000,
      protoType: 1,
      captureId: 2001,
      payload,
    });
  const a1 = { callId: calls.invite, from: "1001", to: "2002" };
  const b1 = { callId: calls.options, from: "3003", to: "4004" };
  const c1 = { callId: calls.tricky, from: "5005", to: "6006" };
  const packets = [
    hep(invite({ ...a1, srcIp: "10.31.0.1" }), 0, "10.31.0.1", "10.31.0.2"),
    hep(response(200, "OK", "INVITE", a1), 500, "10.31.0.2", "10.31.0.1"),
    hep(request("BYE", { ...a1, toTag: "ttag-1" }), 5000, "10.31.0.1", "10.31.0.2"),
    hep(request("OPTIONS", b1), 1000, "10.32.0.1", "10.32.0.2"),
    hep(invite({ ...b1, srcIp: "10.32.0.1" }), 1200, "10.32.0.1", "10.32.0.2"),
    hep(request("CANCEL", { ...b1, cseq: 1 }), 1500, "10.32.0.1", "10.32.0.2"),
    hep(invite({ ...c1, srcIp: "10.33.0.1" }), 2000, "10.33.0.1", "10.33.0.2"),
  ];
  const udp = await Bun.udpSocket({});
  for (const p of packets) udp.send(p, a.app.ingest!.listeners.udp!.port(), "127.0.0.1");
  udp.close();
  const lake = a.app.lake!;
  await waitFor(
    "the calls in the lake",
    async () => {
      await lake.sync();
      if (!lake.table("main.hep_proto_1_call") || !lake.table("main.hep_proto_1_default")) return false;
      const r = await lake.query(
        `SELECT (SELECT count(*) FROM svc_lake.main.hep_proto_1_call WHERE session_id IN ($1, $2, $3)) AS calls, (SELECT count(*) FROM svc_lake.main.hep_proto_1_default WHERE session_id = $2) AS other`,
        [calls.invite, calls.options, calls.tricky],
      );
      return Number(r.rows[0]!.calls) === packets.length - 1 && Number(r.rows[0]!.other) === 1; // OPTIONS is not a call message
    },
    30_000,
  );
  return calls;
}

export const applianceConfig = (extra: Record<string, unknown> = {}) => ({
  coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) }, api_settings: { enable_token_access: true } },
  ...extra,
});

export interface Api {
  base: string;
  token: string;
  call(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; json: Record<string, unknown>; text: string }>;
}

export async function api(a: TestAppliance): Promise<Api> {
  const base = `${a.app.coordinatorUrl}/api/v4`;
  const r = await fetch(`${base}/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const token = ((await r.json()) as { token: string }).token;
  return {
    base,
    token,
    async call(method, path, body, headers = {}) {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        /* not JSON: the text is in `text` */
      }
      return { status: res.status, json, text };
    },
  };
}

/**
 * SQL that must never run (docs/MCP.md "SQL validator"): comments, string tricks, file and
 * network readers, writes, catalog and system views, other schemas, several statements.
 */
export const BYPASS = (marker: string) => [
  `SELECT * FROM svc_lake.main.hep_proto_1_call; DROP TABLE svc_lake.main.hep_proto_1_call`,
  `sql: SELECT * FROM svc_lake.main.hep_proto_1_call -- comment`,
  `SELECT * FROM svc_lake.main.hep_proto_1_call /* hidden */ WHERE 1=1`,
  `/* c */ SELECT 1`,
  `SELECT * FROM read_csv('/etc/passwd')`,
  `SELECT * FROM read_parquet('${marker}/*.parquet')`,
  `show sql SELECT * FROM read_json_auto('/etc/hosts')`,
  `ATTACH '${marker}/evil.db' AS evil`,
  `COPY (SELECT 1) TO '${marker}/out.csv'`,
  `PRAGMA database_list`,
  `INSTALL httpfs`,
  `LOAD httpfs`,
  `SET enable_external_access = true`,
  `SELECT * FROM svc_lake.main.hep_proto_1_call WHERE session_id = ’x’ OR 1=1`,
  `SELECT ‘a’`,
  `WITH x AS (DELETE FROM svc_lake.main.hep_proto_1_call RETURNING *) SELECT * FROM x`,
  `WITH x AS (SELECT 1) INSERT INTO svc_lake.main.hep_proto_1_call SELECT * FROM x`,
  `SELECT 1; SELECT 2`,
  `SELECT * FROM information_schema.tables`,
  `SELECT * FROM duckdb_settings()`,
  `SELECT * FROM duckdb_tables()`,
  `SELECT * FROM svc_lake.main.hep_proto_5_default`,
  `SELECT * FROM other.main.hep_proto_1_call`,
  `SELECT * FROM sqlite_master`,
  `SELECT * FROM query('SELECT 1')`,
  `SELECT getenv('HOME')`,
  `mode=sql call-id x' UNION SELECT * FROM read_csv('/etc/passwd') --`,
  `sql: call-id abc; DROP TABLE svc_lake.main.hep_proto_1_call`,
  `SELECT * FROM glob('/*')`,
  `UPDATE svc_lake.main.hep_proto_1_call SET method = 'X'`,
  `DELETE FROM svc_lake.main.hep_proto_1_call`,
  `CREATE TABLE t AS SELECT 1`,
  `DETACH svc_lake`,
  `CALL pragma_version()`,
  `SELECT * FROM 'x.csv'`,
  `  (SELECT * FROM read_csv('/etc/passwd'))`,
  `call-id x' OR '1'='1`,
  `sql: caller alice' OR 1=1`,
  `show sql call-id abc' UNION SELECT * FROM svc_lake.main.hep_proto_5_default`,
];
