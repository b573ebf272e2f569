/**
 * Shared by the catalog tool tests (backup/restore, rebuild, start-up repair): HEP over UDP into an
 * in-process appliance, the `svc` CLI as a real process on the same configuration file, and the
 * stock DuckDB with the ducklake extension (test/peers/ducklake_queries.py) as the reference reader.
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { encodeHep3 } from "../../src/hep/index.ts";
import type { RunningApp } from "../../src/main.ts";
import { testConfigJson } from "../appliance.ts";
import { cliEnv, runCli, type CliRun } from "../e2e/cli-harness.ts";
import { invite, register } from "../fixtures/sip.ts";
import { pyPeersPython, waitFor } from "../harness.ts";

export const CALL = "main.hep_proto_1_call";
export const REG = "main.hep_proto_1_registration";

type Json = Record<string, unknown>;

/** The appliance's configuration as a file for `svc … --config-path` (same catalog and data path). */
export function writeConfig(dir: string, overrides: Json = {}): string {
  const path = join(dir, "svc.json");
  writeFileSync(path, JSON.stringify(testConfigJson(dir, overrides)));
  return path;
}

export function svc(args: string[], home: string): Promise<CliRun> {
  return runCli(args, cliEnv(home));
}

/** `n` INVITEs (Call-IDs `<prefix>-<i>`) and `regs` REGISTERs, timestamps of the last minutes. */
export async function sendHep(app: RunningApp, prefix: string, n: number, regs = 0): Promise<void> {
  const udp = await Bun.udpSocket({});
  const port = app.ingest!.listeners.udp!.port();
  const t0 = (Date.now() - 60_000) * 1000;
  for (let i = 0; i < n; i++) {
    const payload = invite({ callId: `${prefix}-${i}`, from: `a${i}`, to: "b" });
    udp.send(
      encodeHep3({
        srcIp: "10.1.0.1",
        dstIp: "10.1.0.2",
        srcPort: 5060,
        dstPort: 5060,
        timestampUs: t0 + i * 1000,
        protoType: 1,
        captureId: 9,
        nodeName: "cat",
        payload,
      }),
      port,
      "127.0.0.1",
    );
  }
  for (let i = 0; i < regs; i++) {
    const payload = register({ callId: `${prefix}-reg-${i}`, user: `u${i}`, expires: 60 + i });
    udp.send(
      encodeHep3({
        srcIp: "10.1.0.9",
        dstIp: "10.1.0.2",
        srcPort: 5060,
        dstPort: 5060,
        timestampUs: t0 + i * 1000,
        protoType: 1,
        payload,
      }),
      port,
      "127.0.0.1",
    );
  }
  udp.close();
}

export async function count(app: RunningApp, table: string, where = "true"): Promise<number> {
  await app.lake!.sync();
  return Number((await app.lake!.query(`SELECT count(*) AS n FROM svc_lake.${table} WHERE ${where}`)).rows[0]!.n);
}

/** Sends and waits until every row is in the lake, then flushes them into Parquet. */
export async function ingest(app: RunningApp, prefix: string, n: number, regs = 0): Promise<void> {
  await sendHep(app, prefix, n, regs);
  await waitFor(
    `${n} calls and ${regs} registrations of ${prefix}`,
    async () =>
      (await count(app, CALL, `session_id LIKE '${prefix}-%'`)) === n &&
      (await count(app, REG, `session_id LIKE '${prefix}-reg-%'`)) === regs,
  );
  await app.lake!.flush();
}

/** Every row as text, ordered by uuid: what "the same rows" means in these tests. */
export const ROWS_SQL = (table: string) => `SELECT CAST(COLUMNS(*) AS VARCHAR) FROM ${table} ORDER BY uuid`;

export async function rowsOf(app: RunningApp, table: string, snapshot?: number): Promise<Json[]> {
  await app.lake!.sync();
  const at = snapshot === undefined ? "" : ` AT (VERSION => ${snapshot})`;
  return (await app.lake!.query(`SELECT CAST(COLUMNS(*) AS VARCHAR) FROM svc_lake.${table}${at} ORDER BY uuid`)).rows;
}

const PEER_SCRIPT = resolve(import.meta.dir, "../peers/ducklake_queries.py");

/** Named statements in the stock DuckDB with `ducklake:sqlite:<catalog>` attached read-only as `l`. */
export function peerQueries(
  catalog: string,
  dataPath: string,
  queries: Record<string, string>,
): Record<string, Json[]> {
  const p = Bun.spawnSync([pyPeersPython(), PEER_SCRIPT, catalog, dataPath, "ro", JSON.stringify(queries)], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (!p.success) throw new Error(`ducklake_queries.py failed (${p.exitCode}): ${p.stderr.toString()}`);
  return JSON.parse(p.stdout.toString()) as Record<string, Json[]>;
}
