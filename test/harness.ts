/**
 * Shared test helpers: temp dirs with `await using`, peer detection with one-line skips that turn
 * into failures under SVC_TEST_REQUIRE_PEERS=1 (CI), and waiting for a condition instead of sleeping.
 */
import { test } from "bun:test";
import type { DuckDBConnection } from "@duckdb/node-api";
import { mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

export interface TempDir extends AsyncDisposable {
  path: string;
}

export function tempDir(prefix = "svc-test-"): TempDir {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return {
    path,
    async [Symbol.asyncDispose]() {
      rmSync(path, { recursive: true, force: true });
    },
  };
}

/** A temp dir and a connection of an in-memory DuckDB (UTC) for writing Parquet files; both go at dispose. */
export interface DuckScratch extends AsyncDisposable {
  path: string;
  con: DuckDBConnection;
}

export async function duckScratch(prefix = "svc-duck-"): Promise<DuckScratch> {
  const dir = tempDir(prefix);
  // Loaded here, not at the top: test/lazy-modules.test.ts checks that a start loads no DuckDB
  // module before the lake does, and it imports this file.
  const { DuckDBInstance } = await import("@duckdb/node-api");
  const db = await DuckDBInstance.create(":memory:");
  const con = await db.connect();
  await con.run("SET TimeZone = 'UTC'");
  return {
    path: dir.path,
    con,
    async [Symbol.asyncDispose]() {
      con.closeSync();
      db.closeSync();
      await dir[Symbol.asyncDispose]();
    },
  };
}

const requirePeers = () => process.env.SVC_TEST_REQUIRE_PEERS === "1";

/** A peer is a program on PATH (`which`) or a custom probe. */
export interface Peer {
  /** What the skip line names, e.g. "tshark (apt-get install tshark)". */
  install: string;
  probe: () => boolean;
}

export const onPath = (bin: string) => () => Bun.which(bin) !== null;

/** Python venv made by scripts/python-peers.sh (DuckDB with the ducklake and sqlite extensions). */
export const pyPeersPython = () =>
  join(process.env.SVC_PY_PEERS ?? join(homedir(), ".cache/svc/py-peers"), "bin/python");
function pyDuckLakeReady(): boolean {
  try {
    const check = "import duckdb, duckdb_extension_ducklake, duckdb_extension_sqlite";
    return Bun.spawnSync([pyPeersPython(), "-c", check], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
  } catch {
    return false; // no venv: spawning a missing interpreter throws
  }
}

export const PEERS = {
  tshark: { install: "apt-get install tshark", probe: onPath("tshark") },
  sipp: { install: "apt-get install sip-tester", probe: onPath("sipp") },
  chromium: {
    install: "apt-get install chromium",
    probe: () => Bun.which("chromium") !== null || Bun.which("chromium-browser") !== null,
  },
  kamailio: { install: "apt-get install kamailio", probe: onPath("kamailio") },
  sngrep: { install: "apt-get install sngrep", probe: onPath("sngrep") },
  slapd: {
    install: "apt-get install slapd ldap-utils",
    probe: () => Bun.which("slapd") !== null || Bun.which("/usr/sbin/slapd") !== null,
  },
  promtool: { install: "apt-get install prometheus", probe: onPath("promtool") },
  htpasswd: { install: "apt-get install apache2-utils", probe: onPath("htpasswd") },
  tmux: { install: "apt-get install tmux", probe: onPath("tmux") },
  pyDuckLake: {
    install: "run scripts/python-peers.sh (pip: duckdb==1.5.5 duckdb-extension-ducklake duckdb-extension-sqlite)",
    probe: pyDuckLakeReady,
  },
} satisfies Record<string, Peer>;

/**
 * `test` that needs external peers: without them it is skipped with one line naming what to
 * install; under SVC_TEST_REQUIRE_PEERS=1 a missing peer fails the test instead.
 */
export function peerTest(name: string, peers: Peer[], fn: () => Promise<void> | void, timeout?: number): void {
  const missing = peers.filter((p) => !p.probe());
  if (missing.length === 0) {
    test(name, fn, timeout);
    return;
  }
  const what = missing.map((p) => p.install).join("; ");
  if (requirePeers()) {
    test(name, () => {
      throw new Error(`missing test peer (SVC_TEST_REQUIRE_PEERS=1): ${what}`);
    });
    return;
  }
  console.warn(`skip: "${name}" needs ${what}`);
  test.skip(name, fn);
}

/** Polls `cond` until it returns a truthy value; fails with `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  cond: () => T | Promise<T>,
  timeoutMs = 10_000,
  intervalMs = 20,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await cond();
      if (v) return v as NonNullable<T>;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
