/**
 * Azure Blob credentials without the SDK (docs/STORAGE.md "Object stores", why): connection
 * strings, the Shared Key request signature and SAS tokens. Pure: no I/O.
 */
import { createHmac } from "node:crypto";
import { AppError } from "../../core/index.ts";

/** The storage emulator's documented development account (Azurite, UseDevelopmentStorage=true). */
export const DEV_ACCOUNT = "devstoreaccount1";
export const DEV_ACCOUNT_KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

export interface AzureSettings {
  account_name: string;
  account_key: string;
  connection_string: string;
  endpoint: string;
}

export type AzureAuth =
  | { kind: "shared-key"; account: string; key: Buffer }
  | { kind: "sas"; account: string; query: string };

export interface AzureTarget {
  /** Blob service URL without a trailing slash: `https://acct.blob.core.windows.net`, `http://127.0.0.1:10000/devstoreaccount1`. */
  endpoint: string;
  auth: AzureAuth;
}

const KEY = "storage.lakehouse.azure";

/** `Name=value;…` pairs; a value may hold "=" (base64 keys), names are case-insensitive. */
export function parseConnectionString(s: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [i, part] of s.split(";").entries()) {
    if (part.trim() === "") continue;
    const eq = part.indexOf("=");
    // Nothing of the part is shown: a key pasted without "AccountKey=" is still a secret.
    if (eq <= 0)
      throw new AppError(
        "CONFIG_INVALID",
        `${KEY}.connection_string: part ${i + 1} (between semicolons) is not Name=value`,
      );
    out.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim());
  }
  return out;
}

function decodeKey(key: string, where: string): Buffer {
  const buf = Buffer.from(key, "base64");
  if (buf.length === 0 || buf.toString("base64").replace(/=+$/, "") !== key.replace(/=+$/, "")) {
    throw new AppError("CONFIG_INVALID", `${where} is not base64 (the value is not shown)`);
  }
  return buf;
}

function checkEndpoint(url: string, where: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new AppError(
      "CONFIG_INVALID",
      `${where} "${url}" is not a URL with a scheme (https://<account>.blob.core.windows.net, http://127.0.0.1:10000/devstoreaccount1)`,
    );
  }
  if (u.protocol !== "https:" && u.protocol !== "http:")
    throw new AppError("CONFIG_INVALID", `${where} "${url}": the scheme must be http or https`);
  if (u.search !== "" || u.hash !== "") throw new AppError("CONFIG_INVALID", `${where} "${url}": no query or fragment`);
  return url.replace(/\/+$/, "");
}

/**
 * Where requests go and how they are signed. The connection string wins over account_name and
 * account_key; `endpoint`, when set, wins over the connection string's BlobEndpoint and over
 * the public `https://<account>.blob.core.windows.net`.
 */
export function resolveAzureTarget(s: AzureSettings): AzureTarget {
  let account = s.account_name;
  let auth: AzureAuth | undefined;
  let endpoint = "";
  if (s.connection_string !== "") {
    const cs = parseConnectionString(s.connection_string);
    if (cs.get("usedevelopmentstorage")?.toLowerCase() === "true") {
      account = DEV_ACCOUNT;
      auth = { kind: "shared-key", account, key: Buffer.from(DEV_ACCOUNT_KEY, "base64") };
      endpoint = `http://127.0.0.1:10000/${DEV_ACCOUNT}`;
    } else {
      account = cs.get("accountname") ?? "";
      const blob = cs.get("blobendpoint");
      if (blob) endpoint = checkEndpoint(blob, `${KEY}.connection_string BlobEndpoint`);
      if (account === "" && blob) account = new URL(blob).hostname.split(".")[0] ?? "";
      const key = cs.get("accountkey");
      const sas = cs.get("sharedaccesssignature");
      if (key) auth = { kind: "shared-key", account, key: decodeKey(key, `${KEY}.connection_string AccountKey`) };
      else if (sas) auth = { kind: "sas", account, query: sas.replace(/^\?/, "") };
      else
        throw new AppError(
          "CONFIG_INVALID",
          `${KEY}.connection_string has neither AccountKey nor SharedAccessSignature`,
        );
      if (endpoint === "") {
        if (account === "")
          throw new AppError("CONFIG_INVALID", `${KEY}.connection_string has neither AccountName nor BlobEndpoint`);
        const protocol = (cs.get("defaultendpointsprotocol") ?? "https").toLowerCase();
        if (protocol !== "https" && protocol !== "http")
          throw new AppError(
            "CONFIG_INVALID",
            `${KEY}.connection_string DefaultEndpointsProtocol must be http or https`,
          );
        endpoint = `${protocol}://${account}.blob.${cs.get("endpointsuffix") ?? "core.windows.net"}`;
      }
    }
  } else if (s.account_key !== "") {
    if (account === "") throw new AppError("CONFIG_INVALID", `${KEY}.account_key is set without ${KEY}.account_name`);
    auth = { kind: "shared-key", account, key: decodeKey(s.account_key, `${KEY}.account_key`) };
  } else {
    // The platform credential chain (managed identity, workload identity) is not in this build
    // (docs/STORAGE.md "Object stores", what is left).
    throw new AppError(
      "CONFIG_INVALID",
      `${KEY}: set account_name with account_key, or connection_string (this build has no managed-identity credential chain)`,
    );
  }
  if (s.endpoint !== "") endpoint = checkEndpoint(s.endpoint, `${KEY}.endpoint`);
  if (endpoint === "") endpoint = `https://${account}.blob.core.windows.net`;
  if (!/^[a-z0-9]{3,24}$/.test(account))
    throw new AppError(
      "CONFIG_INVALID",
      `${KEY}.account_name "${account}" is not a storage account name (3-24 of a-z 0-9)`,
    );
  return { endpoint, auth };
}

/**
 * The Shared Key `Authorization` header of one request (Blob service "Authorize with Shared Key"):
 * HMAC-SHA256 over the verb, the standard headers, the x-ms-* headers and the canonical resource
 * `/<account><url path>` with the query parameters sorted by name.
 */
export function sharedKeyAuthorization(
  account: string,
  key: Buffer,
  method: string,
  url: URL,
  headers: Record<string, string>,
): string {
  const h = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const length = h.get("content-length");
  const std = [
    "content-encoding",
    "content-language",
    "content-length",
    "content-md5",
    "content-type",
    "date",
    "if-modified-since",
    "if-match",
    "if-none-match",
    "if-unmodified-since",
    "range",
  ].map((n) => (n === "content-length" ? (length === "0" ? "" : (length ?? "")) : (h.get(n) ?? "")));
  const msHeaders = [...h.entries()]
    .filter(([k]) => k.startsWith("x-ms-"))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}:${v.trim()}\n`)
    .join("");
  const params = new Map<string, string[]>();
  for (const [k, v] of url.searchParams) {
    const name = k.toLowerCase();
    params.set(name, [...(params.get(name) ?? []), v]);
  }
  const query = [...params.keys()]
    .sort()
    .map((k) => `\n${k}:${params.get(k)!.sort().join(",")}`)
    .join("");
  const toSign = `${method}\n${std.join("\n")}\n${msHeaders}/${account}${url.pathname}${query}`;
  return `SharedKey ${account}:${createHmac("sha256", key).update(toSign, "utf8").digest("base64")}`;
}
