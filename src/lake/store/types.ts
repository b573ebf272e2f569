/**
 * The object-store layer of the lake (docs/STORAGE.md "Object stores"): one interface over a local
 * directory, an S3-compatible bucket and an Azure Blob container. Keys are relative to the store's
 * root (the prefix of storage.lakehouse.data_path) and always use "/" between segments.
 */
import { AppError } from "../../core/index.ts";

/** One object of a listing. */
export interface ObjectInfo {
  key: string;
  size: number;
  lastModified: Date;
}

/** What `head` knows of one object. */
export interface ObjectHead {
  size: number;
  /** The store's entity tag, without quotes (S3's multipart tags end in `-<parts>`). */
  etag: string;
}

/** What `put` uploads: a local file (streamed, multipart when large) or bytes in memory. */
export type PutSource = { file: string } | Uint8Array;

export interface ObjectStore {
  readonly kind: "local" | "s3" | "azure";
  /** Where the store points, without any secret: for logs and messages (`s3://bucket/prefix/`). */
  readonly location: string;
  /**
   * Writes the whole object at once: a reader sees the old object or the new one, never a part.
   * Files of at least MULTIPART_THRESHOLD bytes go up in parts of PART_SIZE bytes.
   */
  put(key: string, source: PutSource): Promise<void>;
  /** The whole object; AppError NOT_FOUND when it does not exist. */
  get(key: string): Promise<Uint8Array>;
  /** The whole object as a stream (large Parquet files are not held in memory). */
  getStream(key: string): Promise<ReadableStream<Uint8Array>>;
  /** `length` bytes from `offset` (fewer at the end of the object); NOT_FOUND when missing. */
  getRange(key: string, offset: number, length: number): Promise<Uint8Array>;
  /** Size and entity tag, or undefined when the object does not exist. */
  head(key: string): Promise<ObjectHead | undefined>;
  /** Every object whose key starts with `prefix` (a plain string prefix, "" = all), in key order. */
  list(prefix: string): AsyncIterable<ObjectInfo>;
  /** Removes one object; a missing object is not an error (deletes are retried). */
  delete(key: string): Promise<void>;
  /** Removes several objects, missing ones ignored. */
  deleteMany(keys: string[]): Promise<void>;
}

/**
 * Part size of multipart uploads: S3 needs parts of at least 5 MiB (but the last); 8 MiB keeps a
 * 1 GiB Parquet file under 130 parts and the memory of one upload at a few parts
 * (docs/STORAGE.md "Object stores").
 */
export const PART_SIZE = 8 * 1024 * 1024;
/** Options of the remote stores. */
export interface StoreOptions {
  /**
   * A request (S3: a whole operation) without an answer in this time fails as UNAVAILABLE; a put
   * gets one more second per MiB on top (docs/STORAGE.md "Errors"). Default 120 000 ms.
   */
  requestTimeoutMs?: number;
}
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;

/** The deadline of a put of `bytes`: the request time-out plus a second per MiB (at least 1 MiB/s). */
export const putTimeoutMs = (timeoutMs: number, bytes: number) => timeoutMs + Math.ceil(bytes / (1024 * 1024)) * 1000;

/** From this size on, `put` of a file uploads in parts. */
export const MULTIPART_THRESHOLD = PART_SIZE;

/**
 * A key the lake may use: relative, "/"-separated, no empty, "." or ".." segment, no backslash or
 * control character. The local store maps keys to paths, so a key must never leave its directory.
 */
export function checkKey(key: string): string {
  const bad =
    key.length === 0 ||
    key.length > 1024 ||
    key.startsWith("/") ||
    key.includes("\\") ||
    /[\u0000-\u001f\u007f]/.test(key) ||
    key.split("/").some((s) => s === "" || s === "." || s === "..");
  if (bad)
    throw new AppError(
      "BAD_REQUEST",
      `invalid object key ${JSON.stringify(key.slice(0, 200))}: relative, "/"-separated, no empty, "." or ".." segment`,
    );
  return key;
}

/** A prefix for `list`: "" or a string a key could start with (the same rules, a trailing "/" allowed). */
export function checkPrefix(prefix: string): string {
  if (prefix === "") return prefix;
  checkKey(prefix.endsWith("/") ? prefix.slice(0, -1) : prefix);
  return prefix;
}
