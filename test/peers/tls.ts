import { join } from "node:path";
import { onPath } from "../harness.ts";

/** The openssl command line, which makes the throw-away certificates of the TLS tests. */
export const OPENSSL = { install: "apt-get install openssl", probe: onPath("openssl") };

/**
 * A self-signed P-256 certificate for `cn`, valid one day, written as `cert.pem` and `key.pem`
 * into `dir`; throws with openssl's message when it fails.
 */
export function selfSignedCert(dir: string, cn = "localhost"): { cert: string; key: string } {
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  const gen = Bun.spawnSync(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", `/CN=${cn}`], { stdout: "pipe", stderr: "pipe" });
  if (gen.exitCode !== 0) throw new Error(`openssl req failed (${gen.exitCode}): ${gen.stderr.toString()}`);
  return { cert, key };
}
