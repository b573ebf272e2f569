/**
 * The lake's data in an Azure Blob container, over fetch with our own Shared Key signer
 * (docs/STORAGE.md "Object stores": why not the SDK). Block blobs: Put Blob for small objects,
 * Put Block + Put Block List in PART_SIZE blocks for large files, so the blob appears whole only
 * when the block list commits.
 */
import { AppError } from "../../core/index.ts";
import { sharedKeyAuthorization, type AzureTarget } from "./azure-auth.ts";
import { describeThrown, isNetworkError, storeError, type StoreFailure, type StoreKeys } from "./store-errors.ts";
import {
  checkKey,
  checkPrefix,
  DEFAULT_REQUEST_TIMEOUT_MS,
  MULTIPART_THRESHOLD,
  PART_SIZE,
  putTimeoutMs,
  type ObjectHead,
  type ObjectInfo,
  type ObjectStore,
  type PutSource,
  type StoreOptions,
} from "./types.ts";

/** The Blob service REST version every request asks for (supported by Azure and Azurite 3.x). */
const API_VERSION = "2023-11-03";
/** Attempts of one request when nothing answered or the service said 500/503 (all our requests are idempotent). */
const ATTEMPTS = 3;
/** Wait before the second attempt; doubled before each further one. */
const RETRY_DELAY_MS = 200;

const KEYS: StoreKeys = {
  credentials: "storage.lakehouse.azure.account_name with account_key, or connection_string (values not shown)",
  endpoint: "storage.lakehouse.azure.endpoint (or the connection string's BlobEndpoint)",
};

interface Req {
  method: "GET" | "HEAD" | "PUT" | "DELETE";
  /** Blob key below the prefix; undefined = the container itself. */
  key?: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: Uint8Array;
}

/** The XML character entities List Blobs may use in names. */
const unescapeXml = (s: string) =>
  s.replace(/&(lt|gt|amp|quot|apos|#x[0-9a-fA-F]+|#[0-9]+);/g, (_, e: string) =>
    e === "lt"
      ? "<"
      : e === "gt"
        ? ">"
        : e === "amp"
          ? "&"
          : e === "quot"
            ? '"'
            : e === "apos"
              ? "'"
              : String.fromCodePoint(e[1] === "x" ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1))),
  );
const tag = (xml: string, name: string) => {
  const m = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  return m ? unescapeXml(m[1]!) : undefined;
};

export class AzureBlobStore implements ObjectStore {
  readonly kind = "azure" as const;
  readonly location: string;
  /** Each request (one block at most PART_SIZE) is abandoned, and retried, after this. */
  private readonly timeoutMs: number;

  constructor(
    private readonly target: AzureTarget,
    private readonly container: string,
    /** "" or ends in "/" (parseDataPath). */
    private readonly prefix: string,
    opts: StoreOptions = {},
  ) {
    this.location = `az://${container}/${prefix}`;
    this.timeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  }

  private url(key: string | undefined, query: Record<string, string> | undefined): URL {
    const path = key === undefined ? "" : `/${(this.prefix + key).split("/").map(encodeURIComponent).join("/")}`;
    const url = new URL(`${this.target.endpoint}/${this.container}${path}`);
    for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, v);
    if (this.target.auth.kind === "sas")
      for (const [k, v] of new URLSearchParams(this.target.auth.query)) url.searchParams.set(k, v);
    return url;
  }

  /** One signed request with retries; answers of 4xx come back to the caller, the rest throw. */
  private async send(op: string, req: Req): Promise<Response> {
    let lastFailure: { failure: StoreFailure; detail: string; cause?: unknown } = {
      failure: "unreachable",
      detail: "no attempt",
    };
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      if (attempt > 1) await Bun.sleep(RETRY_DELAY_MS * 2 ** (attempt - 2)); // a restarting service gets a moment
      const url = this.url(req.key, req.query);
      const headers: Record<string, string> = {
        "x-ms-date": new Date().toUTCString(),
        "x-ms-version": API_VERSION,
        "content-length": String(req.body?.byteLength ?? 0),
        ...req.headers,
      };
      if (req.method === "GET" || req.method === "HEAD") delete headers["content-length"];
      const auth = this.target.auth;
      if (auth.kind === "shared-key")
        headers.authorization = sharedKeyAuthorization(auth.account, auth.key, req.method, url, headers);
      let res: Response;
      try {
        res = await fetch(url, {
          method: req.method,
          headers,
          body: req.body as Uint8Array<ArrayBuffer> | undefined,
          signal: AbortSignal.timeout(putTimeoutMs(this.timeoutMs, req.body?.byteLength ?? 0)),
        });
      } catch (e) {
        // The cause keeps the code only: fetch's errors carry the URL, and a SAS URL is a secret.
        const cause = new Error(describeThrown(e));
        if (!isNetworkError(e)) throw storeError("other", op, this.location, KEYS, describeThrown(e), cause);
        lastFailure = { failure: "unreachable", detail: describeThrown(e), cause };
        continue;
      }
      if (res.status === 500 || res.status === 503) {
        await res.body?.cancel();
        lastFailure = {
          failure: "unreachable",
          detail: `HTTP ${res.status} ${res.headers.get("x-ms-error-code") ?? ""}`.trim(),
        };
        continue;
      }
      return res;
    }
    throw storeError(lastFailure.failure, op, this.location, KEYS, lastFailure.detail, lastFailure.cause);
  }

  /** The AppError for an answer that is not a success (its body is dropped: it may echo the string to sign). */
  private async failure(op: string, res: Response): Promise<AppError> {
    await res.body?.cancel();
    const code = res.headers.get("x-ms-error-code") ?? "";
    const detail = `HTTP ${res.status}${code ? ` ${code}` : ""}`;
    if (res.status === 403 || res.status === 401) return storeError("credentials", op, this.location, KEYS, detail);
    if (code === "ContainerNotFound")
      return storeError("no-bucket", op, this.location, KEYS, `container "${this.container}" does not exist`);
    if (res.status === 404) return storeError("missing", op, this.location, KEYS, detail);
    return storeError("other", op, this.location, KEYS, detail);
  }

  private async expectOk(op: string, res: Response): Promise<Response> {
    if (res.ok) return res;
    throw await this.failure(op, res);
  }

  async put(key: string, source: PutSource): Promise<void> {
    checkKey(key);
    const op = `put ${key}`;
    const blockBlob = { "x-ms-blob-type": "BlockBlob", "content-type": "application/octet-stream" };
    if (source instanceof Uint8Array) {
      await this.expectOk(op, await this.send(op, { method: "PUT", key, headers: blockBlob, body: source }));
      return;
    }
    const file = Bun.file(source.file);
    if (!(await file.exists())) throw new AppError("NOT_FOUND", `${op}: source file ${source.file} does not exist`);
    if (file.size < MULTIPART_THRESHOLD) {
      await this.expectOk(
        op,
        await this.send(op, { method: "PUT", key, headers: blockBlob, body: await file.bytes() }),
      );
      return;
    }
    // Blocks of one size-padded id each (Put Block List needs ids of equal length), read one at
    // a time so an upload holds one block in memory.
    const ids: string[] = [];
    for (let offset = 0, n = 0; offset < file.size; offset += PART_SIZE, n++) {
      const id = Buffer.from(`block-${String(n).padStart(6, "0")}`).toString("base64");
      const body = await file.slice(offset, Math.min(offset + PART_SIZE, file.size)).bytes();
      await this.expectOk(op, await this.send(op, { method: "PUT", key, query: { comp: "block", blockid: id }, body }));
      ids.push(id);
    }
    const list = `<?xml version="1.0" encoding="utf-8"?><BlockList>${ids.map((id) => `<Latest>${id}</Latest>`).join("")}</BlockList>`;
    await this.expectOk(
      op,
      await this.send(op, {
        method: "PUT",
        key,
        query: { comp: "blocklist" },
        headers: { "x-ms-blob-content-type": "application/octet-stream" },
        body: new TextEncoder().encode(list),
      }),
    );
  }

  async get(key: string): Promise<Uint8Array> {
    const res = await this.expectOk(`get ${key}`, await this.send(`get ${key}`, { method: "GET", key: checkKey(key) }));
    return new Uint8Array(await res.arrayBuffer());
  }

  async getStream(key: string): Promise<ReadableStream<Uint8Array>> {
    const res = await this.expectOk(`get ${key}`, await this.send(`get ${key}`, { method: "GET", key: checkKey(key) }));
    return res.body ?? new ReadableStream({ start: (c) => c.close() });
  }

  async getRange(key: string, offset: number, length: number): Promise<Uint8Array> {
    checkKey(key);
    if (length <= 0) return new Uint8Array(0);
    const op = `get ${key} bytes ${offset}+${length}`;
    const res = await this.send(op, {
      method: "GET",
      key,
      headers: { "x-ms-range": `bytes=${offset}-${offset + length - 1}` },
    });
    if (res.status === 416) {
      await res.body?.cancel();
      return new Uint8Array(0); // the range starts past the end
    }
    return new Uint8Array(await (await this.expectOk(op, res)).arrayBuffer());
  }

  async head(key: string): Promise<ObjectHead | undefined> {
    const op = `head ${key}`;
    const res = await this.send(op, { method: "HEAD", key: checkKey(key) });
    // HEAD answers carry no body, so no error code: a 404 of a missing container looks like a missing blob.
    if (res.status === 404) return undefined;
    await this.expectOk(op, res);
    return {
      size: Number(res.headers.get("content-length") ?? 0),
      etag: (res.headers.get("etag") ?? "").replace(/^"|"$/g, ""),
    };
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    checkPrefix(prefix);
    const op = `list "${prefix}"`;
    let marker = "";
    do {
      const query: Record<string, string> = {
        restype: "container",
        comp: "list",
        prefix: this.prefix + prefix,
        maxresults: "1000",
      };
      if (marker) query.marker = marker;
      const res = await this.expectOk(op, await this.send(op, { method: "GET", query }));
      const xml = await res.text();
      for (const m of xml.matchAll(/<Blob>([\s\S]*?)<\/Blob>/g)) {
        const name = tag(m[1]!, "Name") ?? "";
        yield {
          key: name.slice(this.prefix.length),
          size: Number(tag(m[1]!, "Content-Length") ?? 0),
          lastModified: new Date(tag(m[1]!, "Last-Modified") ?? 0),
        };
      }
      marker = tag(xml, "NextMarker") ?? "";
    } while (marker !== "");
  }

  async delete(key: string): Promise<void> {
    const op = `delete ${key}`;
    const res = await this.send(op, { method: "DELETE", key: checkKey(key) });
    if (res.status === 404 && res.headers.get("x-ms-error-code") === "BlobNotFound") {
      await res.body?.cancel();
      return;
    }
    await this.expectOk(op, res);
    await res.body?.cancel();
  }

  async deleteMany(keys: string[]): Promise<void> {
    for (const key of keys) await this.delete(key);
  }
}
