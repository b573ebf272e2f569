/**
 * How a store's failures become AppErrors (docs/STORAGE.md "Errors"): the code says what to do,
 * the message names the configuration key to check and the store's location, never a secret
 * (no key, no signature, no SAS URL, no response body).
 */
import { AppError } from "../../core/index.ts";

export type StoreFailure =
  /** The store refused the credentials. */
  | "credentials"
  /** The bucket or container does not exist. */
  | "no-bucket"
  /** The bucket is in another region than the one the request was signed for (S3). */
  | "region"
  /** The object does not exist. */
  | "missing"
  /** Nothing answered, or the store answered 5xx after retries. */
  | "unreachable"
  /** Anything else the store said. */
  | "other";

export interface StoreKeys {
  /** The keys that hold the credentials, e.g. "storage.lakehouse.s3.access_key_id and secret_access_key". */
  credentials: string;
  /** The key that says where the store is, e.g. "storage.lakehouse.s3.endpoint". */
  endpoint: string;
}

export function storeError(
  failure: StoreFailure,
  op: string,
  location: string,
  keys: StoreKeys,
  detail: string,
  cause?: unknown,
): AppError {
  const where = `${op} on ${location}`;
  switch (failure) {
    case "credentials":
      return new AppError(
        "CONFIG_INVALID",
        `${where}: the store refused the credentials (${detail}); check ${keys.credentials}`,
        { cause },
      );
    case "no-bucket":
      return new AppError("CONFIG_INVALID", `${where}: ${detail}; check storage.lakehouse.data_path`, { cause });
    case "region":
      return new AppError(
        "CONFIG_INVALID",
        `${where}: the bucket is in another region (${detail}); check storage.lakehouse.s3.region`,
        { cause },
      );
    case "missing":
      return new AppError("NOT_FOUND", `${where}: the object does not exist`, { cause });
    case "unreachable":
      return new AppError(
        "UNAVAILABLE",
        `${where}: the store is unreachable (${detail}); check ${keys.endpoint} and the network`,
        { cause },
      );
    default:
      return new AppError("DEPENDENCY_FAILED", `${where}: ${detail}`, { cause });
  }
}

/** Error codes of fetch (Bun) and Node sockets that mean "nothing answered". */
const NETWORK_CODES = new Set([
  "ConnectionRefused",
  "ConnectionClosed",
  "ECONNREFUSED",
  "ECONNRESET",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "UND_ERR_CONNECT_TIMEOUT",
  "FailedToOpenSocket",
  "TimeoutError",
]);

export function isNetworkError(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  const name = (e as { name?: unknown })?.name;
  return (typeof code === "string" && NETWORK_CODES.has(code)) || name === "TimeoutError" || name === "AbortError";
}

/** A short, secret-free description of a thrown value: its code or name, never its message (it may echo a URL). */
export function describeThrown(e: unknown): string {
  const code = (e as { code?: unknown })?.code;
  if (typeof code === "string" && code !== "") return code;
  const name = (e as { name?: unknown })?.name;
  return typeof name === "string" ? name : "error";
}

/**
 * `work`, or `onTimeout()` when it has not settled after `ms`. Bun's S3 client takes no signal, so
 * a request to a store that accepts and never answers would otherwise wait forever; the request
 * itself is left to the socket's end.
 */
export async function withDeadline<T>(ms: number, onTimeout: () => AppError, work: Promise<T>): Promise<T> {
  let timer: Timer | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
    work.catch(() => {}); // a late failure of abandoned work is not unhandled
  }
}
