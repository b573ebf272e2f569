/**
 * The lake's object stores (docs/STORAGE.md "Object stores"): `openObjectStore` turns
 * storage.lakehouse.data_path and its s3/azure keys into one ObjectStore.
 */
import { resolveAzureTarget, type AzureSettings } from "./azure-auth.ts";
import { AzureBlobStore } from "./azure-store.ts";
import { parseDataPath } from "./data-path.ts";
import { LocalStore } from "./local-store.ts";
import { S3Store, type S3Settings } from "./s3-store.ts";
import type { ObjectStore, StoreOptions } from "./types.ts";

export { parseDataPath, type DataPath } from "./data-path.ts";
export {
  DEV_ACCOUNT,
  DEV_ACCOUNT_KEY,
  parseConnectionString,
  resolveAzureTarget,
  sharedKeyAuthorization,
  type AzureSettings,
  type AzureTarget,
} from "./azure-auth.ts";
export { AzureBlobStore } from "./azure-store.ts";
export { LocalStore } from "./local-store.ts";
export { resolveS3Endpoint, S3Store, type S3Settings } from "./s3-store.ts";
export {
  checkKey,
  MULTIPART_THRESHOLD,
  PART_SIZE,
  type ObjectHead,
  type ObjectInfo,
  type ObjectStore,
  type PutSource,
  type StoreOptions,
} from "./types.ts";

export interface ObjectStoreSettings {
  data_path: string;
  /** `endpoint` is optional until the schema has the key (docs/STORAGE.md "Object stores"). */
  s3: Omit<S3Settings, "endpoint"> & { endpoint?: string };
  azure: AzureSettings;
}

/** The store data_path names; AppError CONFIG_INVALID naming the key for a bad path or credential setting. */
export function openObjectStore(
  s: ObjectStoreSettings,
  env: Record<string, string | undefined> = process.env,
  opts: StoreOptions = {},
): ObjectStore {
  const where = parseDataPath(s.data_path);
  switch (where.kind) {
    case "local":
      return new LocalStore(where.path);
    case "s3":
      return new S3Store({ ...s.s3, endpoint: s.s3.endpoint ?? "" }, where.bucket, where.prefix, env, opts);
    case "azure":
      return new AzureBlobStore(resolveAzureTarget(s.azure), where.container, where.prefix, opts);
  }
}
