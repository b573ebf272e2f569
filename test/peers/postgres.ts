/**
 * A real PostgreSQL server (Debian `postgresql`, 15 or later) for the PostgreSQL DuckLake catalog
 * tests: `initdb` in a temp directory, `pg_ctl start` on a free loopback port with its unix socket
 * in that directory, one superuser with a generated password and scram-sha-256 for every
 * connection (no `trust`), and one database. Disposal stops the server and removes the directory.
 *
 * initdb and postgres refuse to run as root, and CI runs as root: then the directory is given to
 * the `postgres` system user (made by the Debian package) and every command runs through
 * `runuser -u postgres --`.
 */
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import type { Peer } from "../harness.ts";
import { freeTcpPort } from "./slapd.ts";

/** Directory of initdb, pg_ctl and postgres: Debian's versioned one (newest first), else PATH. */
export function postgresBinDir(): string | null {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => /^\d+$/.test(v) && Number(v) >= 15)
        .sort((a, b) => Number(b) - Number(a))
    : [];
  for (const v of versions) if (existsSync(join(root, v, "bin/initdb"))) return join(root, v, "bin");
  for (const dir of ["/usr/local/bin", "/usr/bin"])
    if (existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl"))) return dir;
  return null;
}

const isRoot = () => process.getuid?.() === 0;

/** uid and gid of the `postgres` system user, when there is one. */
function postgresUser(): { uid: number; gid: number } | null {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith("postgres:"));
  const [, , uid, gid] = line?.split(":") ?? [];
  return uid === undefined || gid === undefined ? null : { uid: Number(uid), gid: Number(gid) };
}

export const postgresPeer: Peer = {
  install: "apt-get install postgresql",
  probe: () => postgresBinDir() !== null && (!isRoot() || (postgresUser() !== null && Bun.which("runuser") !== null)),
};

export interface Postgres extends AsyncDisposable {
  /** `postgres://svc:<password>@127.0.0.1:<port>/<database>` */
  url: string;
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  /** libpq keyword form (what the DuckDB postgres extension takes): "dbname=… host=… port=… user=… password=…". */
  libpq: string;
  /** URL of another database on the same server (created with `createDatabase`). */
  urlOf(database: string): string;
  createDatabase(name: string): Promise<string>;
  /** `pg_ctl stop -m fast`: the server goes down (its data stays), every connection ends. */
  stopServer(): void;
  /** Starts the stopped server again on the same port and data directory. */
  startServer(): void;
}

const running = new Map<string, string[]>();
process.on("exit", () => {
  // A test that times out never disposes: stop what it started so no server outlives the run.
  for (const [data, asUser] of running)
    Bun.spawnSync([...asUser, join(postgresBinDir() ?? "", "pg_ctl"), "stop", "-D", data, "-m", "immediate"], {
      stdout: "ignore",
      stderr: "ignore",
    });
});

function run(cmd: string[], what: string): void {
  const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe", env: { ...process.env, LC_ALL: "C" } });
  if (r.exitCode !== 0) throw new Error(`${what} failed (${r.exitCode}): ${r.stderr.toString()}${r.stdout.toString()}`);
}

/** Starts a server with database `database` (default "lake"); `await using` stops and removes it. */
export async function startPostgres(database = "lake"): Promise<Postgres> {
  const bin = postgresBinDir();
  if (bin === null) throw new Error("PostgreSQL binaries not found (apt-get install postgresql)");
  const root = mkdtempSync(join(tmpdir(), "svc-pg-"));
  const data = join(root, "data");
  const sock = join(root, "sock");
  mkdirSync(sock);
  const password = Bun.randomUUIDv7().replaceAll("-", "");
  const pwfile = join(root, "pw");
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  let asUser: string[] = [];
  if (isRoot()) {
    const u = postgresUser();
    if (u === null) throw new Error("running as root needs the postgres system user (apt-get install postgresql)");
    for (const p of [root, sock, pwfile]) chownSync(p, u.uid, u.gid);
    chmodSync(root, 0o700);
    asUser = ["runuser", "-u", "postgres", "--"];
  }
  const user = "svc";
  const port = freeTcpPort();
  const cleanup = () => rmSync(root, { recursive: true, force: true });
  let startServer = () => {};
  try {
    run(
      [
        ...asUser,
        join(bin, "initdb"),
        "-D",
        data,
        "-U",
        user,
        `--pwfile=${pwfile}`,
        "--auth=scram-sha-256",
        "-E",
        "UTF8",
        "--locale=C",
        "--no-sync",
      ],
      "initdb",
    );
    const opts = `-c listen_addresses=127.0.0.1 -p ${port} -k ${sock} -c fsync=off -c max_connections=40`;
    startServer = () =>
      run(
        [
          ...asUser,
          join(bin, "pg_ctl"),
          "start",
          "-D",
          data,
          "-l",
          join(root, "server.log"),
          "-w",
          "-t",
          "60",
          "-o",
          opts,
        ],
        "pg_ctl start",
      );
    startServer();
    running.set(data, asUser);
  } catch (e) {
    const log = existsSync(join(root, "server.log")) ? readFileSync(join(root, "server.log"), "utf8").slice(-2000) : "";
    cleanup();
    throw new Error(`${String(e)}\n${log}`);
  }
  const host = "127.0.0.1";
  const urlOf = (db: string) => `postgres://${user}:${password}@${host}:${port}/${db}`;
  const createDatabase = async (name: string) => {
    const admin = new SQL(urlOf("postgres"), { max: 1 });
    try {
      await admin.unsafe(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
    } finally {
      await admin.close();
    }
    return urlOf(name);
  };
  let up = true;
  const stopServer = () => {
    run([...asUser, join(bin, "pg_ctl"), "stop", "-D", data, "-m", "fast", "-w"], "pg_ctl stop");
    up = false;
  };
  const stop = async () => {
    if (up) stopServer();
    running.delete(data);
    cleanup();
  };
  try {
    await createDatabase(database);
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    url: urlOf(database),
    host,
    port,
    user,
    password,
    database,
    libpq: `dbname=${database} host=${host} port=${port} user=${user} password=${password}`,
    urlOf,
    createDatabase,
    stopServer,
    startServer: () => {
      startServer();
      up = true;
    },
    [Symbol.asyncDispose]: stop,
  };
}
