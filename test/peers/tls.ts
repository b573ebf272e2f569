import { writeFileSync } from "node:fs";
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
  const gen = Bun.spawnSync(
    [
      "openssl",
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "1",
      "-subj",
      `/CN=${cn}`,
    ],
    {
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  if (gen.exitCode !== 0) throw new Error(`openssl req failed (${gen.exitCode}): ${gen.stderr.toString()}`);
  return { cert, key };
}

/** A CA, a server certificate for 127.0.0.1, a client certificate it signed, and a self-signed rogue. */
export function makePki(dir: string) {
  const f = (n: string) => join(dir, n);
  const run = (...args: string[]) => {
    const r = Bun.spawnSync(["openssl", ...args], { stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`openssl ${args.join(" ")}: ${r.stderr.toString()}`);
  };
  const key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  run("req", "-x509", ...key, "-keyout", f("ca.key"), "-out", f("ca.crt"), "-days", "2", "-subj", "/CN=svc-test-ca");
  writeFileSync(f("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  run("req", ...key, "-keyout", f("server.key"), "-out", f("server.csr"), "-subj", "/CN=127.0.0.1");
  run(
    "x509",
    "-req",
    "-in",
    f("server.csr"),
    "-CA",
    f("ca.crt"),
    "-CAkey",
    f("ca.key"),
    "-CAcreateserial",
    "-out",
    f("server.crt"),
    "-days",
    "2",
    "-extfile",
    f("san.ext"),
  );
  run("req", ...key, "-keyout", f("client.key"), "-out", f("client.csr"), "-subj", "/CN=writer");
  run(
    "x509",
    "-req",
    "-in",
    f("client.csr"),
    "-CA",
    f("ca.crt"),
    "-CAkey",
    f("ca.key"),
    "-CAcreateserial",
    "-out",
    f("client.crt"),
    "-days",
    "2",
  );
  run("req", "-x509", ...key, "-keyout", f("rogue.key"), "-out", f("rogue.crt"), "-days", "2", "-subj", "/CN=rogue");
  return {
    caCrt: f("ca.crt"),
    serverCrt: f("server.crt"),
    serverKey: f("server.key"),
    clientCrt: f("client.crt"),
    clientKey: f("client.key"),
    rogueCrt: f("rogue.crt"),
    rogueKey: f("rogue.key"),
  };
}
