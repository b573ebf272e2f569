/**
 * The elected maintainer of a lake whose catalog is in PostgreSQL (docs/DUCKLAKE.md "PostgreSQL
 * catalog", "One maintainer"): of all svc writers of one catalog, only the holder of a SESSION
 * advisory lock (MAINTAINER_LOCK_KEY, distinct from the commit lock) runs compaction, snapshot
 * expiry, retention and orphan clean-up. The lock lives on one connection reserved from the pool for
 * as long as it is held; when the holder dies its connection ends, the server drops the lock, and
 * the next writer that asks takes it over. No lease, no clock: the server is the referee.
 */
import type { ReservedSQL, SQL } from "bun";
import { createLogger, type Logger } from "../../core/index.ts";
import { toAppError } from "./pg-errors.ts";

/** "svcdmt" in ASCII; the commit lock (pg-db.ts COMMIT_LOCK_KEY) is "svcdlk". */
export const MAINTAINER_LOCK_KEY = 0x737663646d74n;
const KEY = MAINTAINER_LOCK_KEY.toString();

export class MaintainerLock {
  readonly #sql: SQL;
  readonly #log: Logger;
  #conn: ReservedSQL | null = null;
  /** Serialises tryBecomeMaintainer and release: one reserved connection at most. */
  #busy: Promise<unknown> = Promise.resolve();

  /** `sql`: the catalog's pool (PgCatalog.maintainerLock); holding the lock takes one of its connections. */
  constructor(sql: SQL, log?: Logger) {
    this.#sql = sql;
    this.#log = log ?? createLogger({ module: "maintainer-lock" });
  }

  /** Whether this process held the lock when last asked (tryBecomeMaintainer re-checks it on the server). */
  get isMaintainer(): boolean {
    return this.#conn !== null;
  }

  /**
   * True when this process is the maintainer: it already holds the lock and its connection still
   * answers with the lock granted, or it takes the free lock now. False when another process holds
   * it. Call before every maintenance round; a holder whose connection died learns it here.
   */
  tryBecomeMaintainer(): Promise<boolean> {
    const run = this.#busy.then(() => this.#attempt());
    this.#busy = run.catch(() => undefined);
    return run;
  }

  async #attempt(): Promise<boolean> {
    if (this.#conn !== null) {
      if (await this.#stillHeld(this.#conn)) return true;
      this.#log.warn("lost the maintainer lock (its connection ended); maintenance stops until it is taken again");
      this.#drop();
    }
    let conn: ReservedSQL;
    try {
      conn = await this.#sql.reserve();
    } catch (e) {
      throw toAppError("reserving a connection for the maintainer lock", e);
    }
    try {
      const [r] = await conn`SELECT pg_try_advisory_lock(${KEY}::bigint) AS ok`;
      if (r?.ok === true) {
        this.#conn = conn;
        this.#log.info("this process is the lake maintainer (holds the maintainer lock)");
        return true;
      }
      conn.release();
      return false;
    } catch (e) {
      conn.release();
      throw toAppError("taking the maintainer lock", e);
    }
  }

  /** Asked on the lock's own connection: an error (connection gone) means the server dropped the lock. */
  async #stillHeld(conn: ReservedSQL): Promise<boolean> {
    try {
      const [r] =
        await conn`SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
        AND classid = (${KEY}::bigint >> 32)::oid AND objid = (${KEY}::bigint & 4294967295)::oid AND objsubid = 1) AS held`;
      return r?.held === true;
    } catch {
      return false;
    }
  }

  #drop(): void {
    const conn = this.#conn;
    this.#conn = null;
    try {
      conn?.release();
    } catch {
      // a dead connection: nothing to give back
    }
  }

  /** Gives the lock up (another writer may take it at once) and returns the connection to the pool. Idempotent. */
  release(): Promise<void> {
    const run = this.#busy.then(async () => {
      const conn = this.#conn;
      if (conn === null) return;
      try {
        await conn`SELECT pg_advisory_unlock(${KEY}::bigint)`;
      } catch {
        // connection gone: the server dropped the lock with it
      }
      this.#drop();
      this.#log.info("released the maintainer lock");
    });
    this.#busy = run.catch(() => undefined);
    return run;
  }

  /** The server process id of the lock's connection (tests end it to play a dead holder), or null. */
  async backendPid(): Promise<number | null> {
    const conn = this.#conn;
    if (conn === null) return null;
    const [r] = await conn`SELECT pg_backend_pid() AS pid`;
    return r === undefined ? null : Number(r.pid);
  }
}
