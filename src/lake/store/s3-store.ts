/**
 * The lake's data in an S3-compatible bucket over Bun's own S3 client (docs/STORAGE.md "Object
 * stores"; docs/PLATFORM.md "Bun's S3 client" for the behaviours measured). Bun signs with
 * SigV4, retries, and uploads a Bun.file in parts of `partSize` bytes; the object appears whole
 * only when the multipart upload completes.
 */
import { AppError } from "../../core/index.ts";
import { describeThrown, storeError, withDeadline, type StoreFailure, type StoreKeys } from "./store-errors.ts";
import {
  checkKey,
  checkPrefix,
  DEFAULT_REQUEST_TIMEOUT_MS,
  PART_SIZE,
  putTimeoutMs,
  type ObjectHead,
  type ObjectInfo,
  type ObjectStore,
  type PutSource,
  type StoreOptions,
} from "./types.ts";

export interface S3Settings {
  region: string;
  access_key_id: string;
  secret_access_key: string;
  /** Full URL with scheme of an S3-compatible server; "" = AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, else AWS itself. */
  endpoint: string;
}

const KEYS: StoreKeys = {
  credentials: "storage.lakehouse.s3.access_key_id and storage.lakehouse.s3.secret_access_key (values not shown)",
  endpoint: "storage.lakehouse.s3.endpoint (or AWS_ENDPOINT_URL)",
};

/** S3 error codes (and Bun's) by what they mean for the operator. */
const FAILURE: Record<string, StoreFailure> = {
  InvalidAccessKeyId: "credentials",
  SignatureDoesNotMatch: "credentials",
  AccessDenied: "credentials",
  ExpiredToken: "credentials",
  InvalidToken: "credentials",
  ERR_S3_MISSING_CREDENTIALS: "credentials",
  ERR_S3_INVALID_SIGNATURE: "credentials",
  NoSuchBucket: "no-bucket",
  AuthorizationHeaderMalformed: "region",
  PermanentRedirect: "region",
  IllegalLocationConstraintException: "region",
  NoSuchKey: "missing",
  ConnectionRefused: "unreachable",
  ConnectionClosed: "unreachable",
  FailedToOpenSocket: "unreachable",
  ECONNREFUSED: "unreachable",
  ECONNRESET: "unreachable",
  ENOTFOUND: "unreachable",
  ETIMEDOUT: "unreachable",
  SlowDown: "unreachable",
  ServiceUnavailable: "unreachable",
  InternalError: "unreachable",
};

/** Where requests go: the key, then the standard AWS variables (Bun itself reads only S3_ENDPOINT and AWS_ENDPOINT). */
export function resolveS3Endpoint(s: S3Settings, env: Record<string, string | undefined>): string | undefined {
  const [value, where] = s.endpoint
    ? [s.endpoint, "storage.lakehouse.s3.endpoint"]
    : env.AWS_ENDPOINT_URL_S3
      ? [env.AWS_ENDPOINT_URL_S3, "AWS_ENDPOINT_URL_S3"]
      : env.AWS_ENDPOINT_URL
        ? [env.AWS_ENDPOINT_URL, "AWS_ENDPOINT_URL"]
        : [undefined, ""];
  if (value === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new AppError(
      "CONFIG_INVALID",
      `${where} "${value}" is not a URL with a scheme (https://s3.example.com, http://127.0.0.1:9000)`,
    );
  }
  if (u.protocol !== "https:" && u.protocol !== "http:")
    throw new AppError("CONFIG_INVALID", `${where} "${value}": the scheme must be http or https`);
  if (u.username !== "" || u.password !== "" || u.search !== "" || u.hash !== "")
    throw new AppError("CONFIG_INVALID", `${where}: no credentials, query or fragment in the URL`);
  return value.replace(/\/+$/, "");
}

export class S3Store implements ObjectStore {
  readonly kind = "s3" as const;
  readonly location: string;
  private readonly client: Bun.S3Client;
  private readonly timeoutMs: number;

  constructor(
    s: S3Settings,
    bucket: string,
    private readonly prefix: string,
    env: Record<string, string | undefined> = process.env,
    opts: StoreOptions = {},
  ) {
    this.timeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.location = `s3://${bucket}/${prefix}`;
    const endpoint = resolveS3Endpoint(s, env);
    if ((s.access_key_id === "") !== (s.secret_access_key === "")) {
      throw new AppError(
        "CONFIG_INVALID",
        "storage.lakehouse.s3.access_key_id and secret_access_key are set together or not at all",
      );
    }
    this.client = new Bun.S3Client({
      bucket,
      region: s.region || env.AWS_REGION || env.AWS_DEFAULT_REGION || "us-east-1",
      // Unset keys: Bun falls back to S3_*/AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN.
      ...(s.access_key_id ? { accessKeyId: s.access_key_id, secretAccessKey: s.secret_access_key } : {}),
      ...(endpoint ? { endpoint } : {}),
      // AWS itself: bucket.s3.<region>.amazonaws.com, but path style for a bucket with a dot (its
      // host name would not match AWS's wildcard certificate). A custom endpoint (MinIO, Ceph,
      // moto, R2 by account URL) keeps path style, which every S3-compatible server accepts.
      virtualHostedStyle: endpoint === undefined && !bucket.includes("."),
      partSize: PART_SIZE,
      queueSize: 4,
      retry: 3,
    });
  }

  /** `work` within the time-out (`ms` for puts), else UNAVAILABLE. */
  private timed<T>(op: string, work: Promise<T>, ms = this.timeoutMs): Promise<T> {
    return withDeadline(
      ms,
      () => storeError("unreachable", op, this.location, KEYS, `no answer within ${ms} ms`),
      work,
    );
  }

  private fail(op: string, e: unknown): AppError {
    if (e instanceof AppError) return e;
    const code = describeThrown(e);
    return storeError(FAILURE[code] ?? "other", op, this.location, KEYS, code, e);
  }

  private path(key: string): string {
    return this.prefix + checkKey(key);
  }

  async put(key: string, source: PutSource): Promise<void> {
    const path = this.path(key);
    const op = `put ${key}`;
    let body: Uint8Array | Blob = source as Uint8Array;
    let size = (source as Uint8Array).byteLength;
    if (!(source instanceof Uint8Array)) {
      const file = Bun.file(source.file);
      if (!(await file.exists())) throw new AppError("NOT_FOUND", `${op}: source file ${source.file} does not exist`);
      body = file; // Bun streams a file of partSize or more as a multipart upload
      size = file.size;
    }
    try {
      await this.timed(
        op,
        this.client.write(path, body, { type: "application/octet-stream" }),
        putTimeoutMs(this.timeoutMs, size),
      );
    } catch (e) {
      throw this.fail(op, e);
    }
  }

  async get(key: string): Promise<Uint8Array> {
    try {
      return await this.timed(`get ${key}`, this.client.file(this.path(key)).bytes());
    } catch (e) {
      throw this.fail(`get ${key}`, e);
    }
  }

  async getStream(key: string): Promise<ReadableStream<Uint8Array>> {
    // A stream reports a failure only when read: a head first turns a missing key into NOT_FOUND.
    if ((await this.head(key)) === undefined) throw storeError("missing", `get ${key}`, this.location, KEYS, "");
    return this.client.file(this.path(key)).stream();
  }

  async getRange(key: string, offset: number, length: number): Promise<Uint8Array> {
    if (length <= 0) return new Uint8Array(0);
    try {
      return await this.timed(
        `get ${key} bytes ${offset}+${length}`,
        this.client
          .file(this.path(key))
          .slice(offset, offset + length)
          .bytes(),
      );
    } catch (e) {
      if (describeThrown(e) === "InvalidRange") return new Uint8Array(0); // starts past the end
      throw this.fail(`get ${key} bytes ${offset}+${length}`, e);
    }
  }

  async head(key: string): Promise<ObjectHead | undefined> {
    const path = this.path(key);
    try {
      const s = await this.timed(`head ${key}`, this.client.stat(path));
      return { size: s.size, etag: s.etag.replace(/^"|"$/g, "") };
    } catch (e) {
      const code = describeThrown(e);
      // A HEAD answer has no body, so a missing bucket also says NoSuchKey, and a refused
      // signature says UnknownError: one byte by GET, whose answer has the real code, tells.
      if (code !== "NoSuchKey" && code !== "UnknownError") throw this.fail(`head ${key}`, e);
      try {
        await this.timed(`head ${key}`, this.client.file(path).slice(0, 1).bytes());
      } catch (e2) {
        if (describeThrown(e2) === "NoSuchKey") return undefined;
        throw this.fail(`head ${key}`, e2);
      }
      throw this.fail(`head ${key}`, e);
    }
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    checkPrefix(prefix);
    let token: string | undefined;
    do {
      let page: Awaited<ReturnType<Bun.S3Client["list"]>>;
      try {
        page = await this.timed(
          `list "${prefix}"`,
          this.client.list({
            prefix: this.prefix + prefix,
            maxKeys: 1000,
            ...(token ? { continuationToken: token } : {}),
          }),
        );
      } catch (e) {
        throw this.fail(`list "${prefix}"`, e);
      }
      for (const o of page.contents ?? []) {
        yield { key: o.key.slice(this.prefix.length), size: o.size ?? 0, lastModified: new Date(o.lastModified ?? 0) };
      }
      token = page.isTruncated ? page.nextContinuationToken : undefined;
    } while (token);
  }

  async delete(key: string): Promise<void> {
    try {
      await this.timed(`delete ${key}`, this.client.delete(this.path(key))); // S3 answers 204 for a missing key too
    } catch (e) {
      throw this.fail(`delete ${key}`, e);
    }
  }

  async deleteMany(keys: string[]): Promise<void> {
    // Bun's client has no DeleteObjects; a few deletes at a time keep the request count bounded.
    for (let i = 0; i < keys.length; i += 8) await Promise.all(keys.slice(i, i + 8).map((k) => this.delete(k)));
  }
}
