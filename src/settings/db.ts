import { Database } from "bun:sqlite";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { AppError } from "../core/index.ts";
import { migrate } from "./migrations.ts";

/**
 * The settings database handle. Repositories are built before the module starts (the HTTP app is
 * assembled first), so they hold this handle and reach the connection through `db`, which fails
 * with UNAVAILABLE until `open()` ran: a request can never touch a half-initialised database.
 */
export class SettingsDb {
  private conn: Database | undefined;

  constructor(readonly path: string) {}

  /** Opens (creating the file and its directory), sets WAL and applies pending migrations. */
  open(): { fromVersion: number; toVersion: number } {
    if (this.conn) throw new AppError("INTERNAL", `settings database ${this.path} is already open`);
    const onDisk = this.path !== ":memory:";
    const fresh = onDisk && !existsSync(this.path);
    if (onDisk) mkdirSync(dirname(this.path), { recursive: true });
    let db: Database;
    try {
      db = new Database(this.path, { create: true, strict: true });
      // Password and token hashes live here: owner-only from the start (SQLite gives -wal/-shm the same mode).
      if (fresh) chmodSync(this.path, 0o600);
      // WAL + synchronous=NORMAL: readers never block the writer (docs/PLATFORM.md "SQLite settings database").
      db.exec(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;",
      );
    } catch (e) {
      throw new AppError(
        "CONFIG_INVALID",
        `cannot open settings database ${this.path} (coordinator.settings_db_path): ${(e as Error).message}`,
        {
          cause: e,
        },
      );
    }
    const versions = migrate(db);
    this.conn = db;
    return versions;
  }

  get db(): Database {
    if (!this.conn) throw new AppError("UNAVAILABLE", "settings database is not open");
    return this.conn;
  }

  get isOpen(): boolean {
    return this.conn !== undefined;
  }

  /** Runs `fn` in one IMMEDIATE transaction (the write lock is taken up front, no upgrade deadlock). */
  tx<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  close(): void {
    const c = this.conn;
    this.conn = undefined;
    c?.close();
  }
}

export const nowMs = (): number => Date.now();

/** A 400 naming the failing field (`{error: "VALIDATION", message: "field: why", fields: [field]}`). */
export const invalidField = (field: string, why: string): AppError =>
  new AppError("VALIDATION", `${field}: ${why}`, { details: { fields: [field] } });
export const newId = (): string => Bun.randomUUIDv7();

/** SQLite stores booleans as 0/1. */
export const toBool = (v: unknown): boolean => v === 1 || v === true || v === 1n;

/** Parses a JSON column written by this module; a damaged value is reported, not thrown as a 500 later. */
export function parseJsonColumn<T>(text: string, fallback: T): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

type Bindable = string | number | null;

/**
 * `SET a = $a, b = $b` for the members of `patch` that are not undefined; `columns` maps member
 * names to trusted column names. Booleans become 0/1. Returns the number of columns set.
 */
export function updateColumns(
  h: SettingsDb,
  table: string,
  key: { column: string; value: string },
  patch: Readonly<Record<string, string | number | boolean | null | undefined>>,
  columns: Readonly<Record<string, string>>,
): number {
  const sets: string[] = [];
  const params: Record<string, Bindable> = { key: key.value, now: nowMs() };
  for (const [member, column] of Object.entries(columns)) {
    const v = patch[member];
    if (v === undefined) continue;
    sets.push(`${column} = $${member}`);
    params[member] = typeof v === "boolean" ? (v ? 1 : 0) : v;
  }
  if (sets.length === 0) return 0;
  h.db.query(`UPDATE ${table} SET ${sets.join(", ")}, updated_at = $now WHERE ${key.column} = $key`).run(params);
  return sets.length;
}
