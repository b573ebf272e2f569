import { X509Certificate, createPrivateKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { AppError } from "./errors.ts";

/**
 * PEM files of a TLS listener or client, read once at start (docs/ARCHITECTURE.md "Node
 * authentication"). Every mistake is CONFIG_INVALID naming the key: a cert
 * without its key, a file that cannot be read or holds no PEM of the right kind, a key that is not
 * the certificate's. Bun would otherwise find them only at the first handshake (or never say which
 * file), and the listener would look healthy while refusing every connection.
 */
export interface TlsPem {
  /** PEM text of the certificate (chain), when one is presented. */
  cert?: string;
  key?: string;
  /** PEM text of the CA bundle the peer's certificate is verified against. */
  ca?: string;
}

const CERT_BLOCK = /-----BEGIN CERTIFICATE-----/;

function readPem(path: string, key: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new AppError("CONFIG_INVALID", `${key}: cannot read ${path}: ${(e as Error).message}`, { cause: e });
  }
  if (!/-----BEGIN [A-Z0-9 ]+-----/.test(text))
    throw new AppError("CONFIG_INVALID", `${key}: ${path} holds no PEM block`);
  return text;
}

/** cert and key of one side: both or neither, the certificate parsed, the key the certificate's. */
function readPair(cert: string, key: string, prefix: string): { cert: string; key: string } | undefined {
  if (!cert && !key) return undefined;
  if (!cert || !key)
    throw new AppError("CONFIG_INVALID", `${prefix}.cert and ${prefix}.key: set both (TLS) or neither (plain HTTP)`);
  const certPem = readPem(cert, `${prefix}.cert`);
  const keyPem = readPem(key, `${prefix}.key`);
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(certPem);
  } catch (e) {
    throw new AppError("CONFIG_INVALID", `${prefix}.cert: ${cert} is not a PEM certificate: ${(e as Error).message}`, {
      cause: e,
    });
  }
  let matches: boolean;
  try {
    matches = x509.checkPrivateKey(createPrivateKey(keyPem));
  } catch (e) {
    throw new AppError(
      "CONFIG_INVALID",
      `${prefix}.key: ${key} is not a PEM private key (an encrypted key is not supported): ${(e as Error).message}`,
      { cause: e },
    );
  }
  if (!matches)
    throw new AppError(
      "CONFIG_INVALID",
      `${prefix}.key: ${key} is not the key of the certificate ${prefix}.cert (${cert})`,
    );
  return { cert: certPem, key: keyPem };
}

function readCaBundle(path: string, key: string): string {
  const text = readPem(path, key);
  if (!CERT_BLOCK.test(text))
    throw new AppError(
      "CONFIG_INVALID",
      `${key}: ${path} holds no certificate (a CA bundle is one or more PEM CERTIFICATE blocks)`,
    );
  return text;
}

/**
 * A listener's `cert`, `key` and `cacert` (the keys of ingest.line_protocol, ingest.otlp and
 * node.http_server): undefined for plain HTTP; `ca` set means client certificates are required
 * and verified against it (mutual TLS). `prefix` is the config path named in errors.
 */
export function loadServerTls(
  cfg: { cert: string; key: string; cacert: string },
  prefix: string,
): (Required<Pick<TlsPem, "cert" | "key">> & Pick<TlsPem, "ca">) | undefined {
  const pair = readPair(cfg.cert, cfg.key, prefix);
  if (!pair) {
    if (cfg.cacert)
      throw new AppError(
        "CONFIG_INVALID",
        `${prefix}.cacert: client certificates need ${prefix}.cert and ${prefix}.key as well`,
      );
    return undefined;
  }
  return { ...pair, ...(cfg.cacert ? { ca: readCaBundle(cfg.cacert, `${prefix}.cacert`) } : {}) };
}

/**
 * A client's `ca` (verify the server against it instead of the system's CAs) and `cert` + `key`
 * (present a client certificate for mutual TLS), e.g. coordinator.nodes[i]. `prefix` is the config
 * path named in errors.
 */
export function loadClientTls(
  cfg: { ca?: string | undefined; cert?: string | undefined; key?: string | undefined },
  prefix: string,
): TlsPem {
  const pair = readPair(cfg.cert ?? "", cfg.key ?? "", prefix);
  return { ...(cfg.ca ? { ca: readCaBundle(cfg.ca, `${prefix}.ca`) } : {}), ...(pair ?? {}) };
}

/**
 * The `tls` option of Bun's fetch and WebSocket client for `pem` (both take `ca`, `cert`, `key`):
 * `{}` when there is nothing to set, so the system's CAs verify the server. The server's
 * certificate is always verified (rejectUnauthorized stays true).
 */
export function clientTlsOptions(pem: TlsPem): { tls?: { ca?: string; cert?: string; key?: string } } {
  const tls = { ...(pem.ca ? { ca: pem.ca } : {}), ...(pem.cert && pem.key ? { cert: pem.cert, key: pem.key } : {}) };
  return Object.keys(tls).length > 0 ? { tls } : {};
}
