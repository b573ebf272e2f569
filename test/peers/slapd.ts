/**
 * A real OpenLDAP server (Debian `slapd`) for the LDAP login tests: its own config and database in
 * a temp directory, an LDIF loaded with `slapadd`, a self-signed certificate made by openssl, one
 * plain listener (StartTLS) and one LDAPS listener on free loopback ports. `security tls=1` makes
 * slapd refuse every operation that does not run over TLS, so a login that works proves the TLS.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { waitFor } from "../harness.ts";
import { freePort, spawnPeer, type PeerProcess } from "./process.ts";
import { selfSignedCert } from "./tls.ts";

export const SUFFIX = "dc=example,dc=org";
export const SERVICE_DN = `cn=svc,ou=system,${SUFFIX}`;
export const SERVICE_PASSWORD = "svc-bind-pw";

export interface Slapd extends AsyncDisposable {
  /** Port of `ldap://127.0.0.1` (StartTLS required by the server). */
  port: number;
  /** Port of `ldaps://127.0.0.1`. */
  ldapsPort: number;
  proc: PeerProcess;
}

const SLAPD = "/usr/sbin/slapd";
const SLAPADD = "/usr/sbin/slapadd";

/** A free loopback TCP port (test/peers/process.ts `freePort`: below the ephemeral range). */
export const freeTcpPort = freePort;

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });

/** Starts slapd over `ldif` (entries below SUFFIX; the suffix entry and the service account are added here). */
export async function startSlapd(dir: string, ldif: string): Promise<Slapd> {
  const db = join(dir, "db");
  mkdirSync(db, { recursive: true });
  const { cert, key } = selfSignedCert(dir, "localhost");
  const conf = join(dir, "slapd.conf");
  writeFileSync(
    conf,
    [
      ...["core", "cosine", "inetorgperson", "nis"].map((s) => `include /etc/ldap/schema/${s}.schema`),
      "modulepath /usr/lib/ldap",
      "moduleload back_mdb",
      `pidfile ${join(dir, "slapd.pid")}`,
      `TLSCertificateFile ${cert}`,
      `TLSCertificateKeyFile ${key}`,
      "security tls=1",
      "database mdb",
      `suffix "${SUFFIX}"`,
      `rootdn "cn=admin,${SUFFIX}"`,
      "rootpw root-pw-not-used",
      `directory ${db}`,
      "access to attrs=userPassword by anonymous auth by * none",
      "access to * by users read by * none",
      "",
    ].join("\n"),
  );
  const base = [
    `dn: ${SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example`,
    `dn: ou=system,${SUFFIX}\nobjectClass: organizationalUnit\nou: system`,
    `dn: ${SERVICE_DN}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\ncn: svc\nuserPassword: ${SERVICE_PASSWORD}`,
  ].join("\n\n");
  const ldifPath = join(dir, "data.ldif");
  writeFileSync(ldifPath, `${base}\n\n${ldif.trim()}\n`);
  const add = Bun.spawnSync([SLAPADD, "-f", conf, "-l", ldifPath], { stdout: "pipe", stderr: "pipe" });
  if (add.exitCode !== 0) throw new Error(`slapadd failed (${add.exitCode}): ${add.stderr.toString()}`);
  const port = freeTcpPort();
  const ldapsPort = freeTcpPort();
  const proc = spawnPeer(
    "slapd",
    [SLAPD, "-f", conf, "-h", `ldap://127.0.0.1:${port}/ ldaps://127.0.0.1:${ldapsPort}/`, "-d", "256"],
    { dir },
  );
  try {
    await waitFor("slapd listening", async () => (await accepts(port)) && (await accepts(ldapsPort)), 15_000);
  } catch (e) {
    await proc.stop();
    throw new Error(`${String(e)}\n${proc.output().slice(-2000)}`);
  }
  return { port, ldapsPort, proc, [Symbol.asyncDispose]: async () => void (await proc.stop()) };
}

/** An LDIF person below ou=people. */
export const person = (uid: string, password: string, given: string, sn: string) =>
  `dn: uid=${uid},ou=people,${SUFFIX}\nobjectClass: inetOrgPerson\nuid: ${uid}\ncn: ${given} ${sn}\ngivenName: ${given}\nsn: ${sn}\nmail: ${uid}@example.org\nuserPassword: ${password}`;
