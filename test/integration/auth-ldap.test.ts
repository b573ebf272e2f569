/**
 * LDAP password login against a real Debian slapd
 * (test/peers/slapd.ts; docs/AUTH.md). slapd refuses every operation without TLS, so each login
 * that works went over StartTLS or LDAPS; a dead loopback address (127.0.0.2, nothing listens
 * there) is first in the host list of every test.
 */
import { afterAll, describe, expect } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { configureLogging } from "../../src/core/index.ts";
import { PEERS, peerTest, tempDir, type TempDir } from "../harness.ts";
import { OPENSSL } from "../peers/tls.ts";
import { person, SERVICE_DN, SERVICE_PASSWORD, startSlapd, SUFFIX, type Slapd } from "../peers/slapd.ts";
import { ADMIN_PASSWORD, dataOf, startServer, type CallResult, type Server } from "./auth-harness.ts";

const PW = { alice: "alice-pw-1", bob: "bob-pw-2", carol: "carol-pw-3", dave: "dave-pw-4" };

const LDIF = [
  `dn: ou=people,${SUFFIX}\nobjectClass: organizationalUnit\nou: people`,
  `dn: ou=groups,${SUFFIX}\nobjectClass: organizationalUnit\nou: groups`,
  person("alice", PW.alice, "Alice", "Admin"),
  person("bob", PW.bob, "Bob", "User"),
  person("carol", PW.carol, "Carol", "Ops"),
  person("dave", PW.dave, "Dave", "Nogroup"),
  `dn: cn=voip-admins,ou=groups,${SUFFIX}\nobjectClass: posixGroup\ncn: voip-admins\ngidNumber: 1000\nmemberUid: alice`,
  `dn: cn=voip-users,ou=groups,${SUFFIX}\nobjectClass: posixGroup\ncn: voip-users\ngidNumber: 1001\nmemberUid: alice\nmemberUid: bob`,
  `dn: cn=ops,ou=groups,${SUFFIX}\nobjectClass: groupOfNames\ncn: ops\nmember: uid=carol,ou=people,${SUFFIX}`,
].join("\n\n");

const GENERIC_401 = { error: "UNAUTHORIZED", message: "invalid username or password" };
const NEEDS = [PEERS.slapd, OPENSSL];

let slapdDir: TempDir | undefined;
let slapd: Slapd | undefined;
/** One slapd for the file, started by the first test that needs it. */
async function server(): Promise<Slapd> {
  slapdDir ??= tempDir("svc-slapd-");
  slapd ??= await startSlapd(slapdDir.path, LDIF);
  return slapd;
}
afterAll(async () => {
  await slapd?.[Symbol.asyncDispose]();
  await slapdDir?.[Symbol.asyncDispose]();
});

/** Search-then-bind over StartTLS with the dead host first; `over` replaces keys of coordinator.ldap. */
async function ldapConfig(over: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const s = await server();
  return {
    enable: true,
    host: "127.0.0.2 127.0.0.1",
    port: s.port,
    server_name: "localhost",
    insecure_skip_verify: true,
    bind_dn: SERVICE_DN,
    bind_password: SERVICE_PASSWORD,
    base: SUFFIX,
    user_filter: "(&(objectClass=inetOrgPerson)(uid=%s))",
    admin_group: "voip-admins",
    user_group: "voip-users",
    ...over,
  };
}

async function coordinator(
  dir: string,
  ldap: Record<string, unknown>,
  auth: Record<string, unknown> = {},
): Promise<Server> {
  return await startServer(dir, { coordinator: { ldap, auth } });
}

const login = (c: Server, username: string, password: string, type?: "internal" | "ldap"): Promise<CallResult> =>
  c.fetch("POST", "/auth/sessions", { body: { username, password, ...(type ? { type } : {}) } });

const userOf = (r: CallResult) => (r.json as { user: Record<string, unknown> }).user;

/** The `coordinator.ldap` example of docs/AUTH.md, read from the doc so the doc stays true. */
function docExample(): Record<string, unknown> {
  const text = readFileSync(join(import.meta.dir, "../../docs/AUTH.md"), "utf8");
  const block = /```jsonc\n([\s\S]*?)```/.exec(text)?.[1];
  if (!block) throw new Error("docs/AUTH.md has no jsonc example");
  return (JSON.parse(`{${block}}`) as { ldap: Record<string, unknown> }).ldap;
}

describe("LDAP login (real slapd)", () => {
  peerTest(
    "the example of docs/AUTH.md logs in, with only the hosts and the secret replaced (and the test certificate accepted)",
    NEEDS,
    async () => {
      await using dir = tempDir();
      const s = await server();
      const example = docExample();
      expect(example.host).toBe("ldap1.example.org ldap2.example.org");
      const cfg = {
        ...example,
        host: `127.0.0.2 127.0.0.1`,
        port: s.port,
        bind_password: SERVICE_PASSWORD,
        server_name: "localhost",
        insecure_skip_verify: true,
      };
      await using c = await coordinator(dir.path, cfg);
      expect(userOf(await login(c, "alice", PW.alice, "ldap"))).toMatchObject({
        username: "alice",
        is_admin: true,
        user_group: "voip-admins",
      });
      expect(userOf(await login(c, "bob", PW.bob, "ldap"))).toMatchObject({
        username: "bob",
        is_admin: false,
        user_group: "voip-users",
      });
      expect((await login(c, "dave", PW.dave, "ldap")).status).toBe(401);
    },
    60_000,
  );

  peerTest(
    "search-then-bind: groups decide admin or user; the session works; no users row is written",
    NEEDS,
    async () => {
      await using dir = tempDir();
      await using c = await coordinator(dir.path, await ldapConfig());
      const alice = await login(c, "alice", PW.alice, "ldap");
      expect(alice.status).toBe(201);
      expect(userOf(alice)).toMatchObject({
        id: null,
        username: "alice",
        email: "alice@example.org",
        first_name: "Alice",
        last_name: "Admin",
        is_admin: true,
        provider: "ldap",
        user_group: "voip-admins",
      });
      const bob = await login(c, "bob", PW.bob, "ldap");
      expect(bob.status).toBe(201);
      expect(userOf(bob)).toMatchObject({
        username: "bob",
        is_admin: false,
        provider: "ldap",
        user_group: "voip-users",
      });
      const me = await c.fetch("GET", "/me", { token: String((alice.json as { token: string }).token) });
      expect(me.status).toBe(200);
      expect(dataOf(me)).toMatchObject({ username: "alice", is_admin: true });
      // LDAP users are not inserted into the users table
      const admin = await login(c, "admin", ADMIN_PASSWORD);
      const users = await c.fetch("GET", "/users", { token: String((admin.json as { token: string }).token) });
      expect(users.status).toBe(200);
      const names = (dataOf(users).items as Array<{ username: string }>).map((u) => u.username);
      expect(names).toEqual(["admin"]);
      // a users row named like a directory user (any case) takes the name: by default the LDAP login
      // is refused (API tokens kept by name would act with that row's rights), and the answer says
      // what to do; a wrong directory password still gets the generic 401
      const adminToken = String((admin.json as { token: string }).token);
      const created = await c.fetch("POST", "/users", {
        token: adminToken,
        body: { username: "Bob", password: "local-bob-pw", is_admin: true },
      });
      expect(created.status).toBe(201);
      const refused = await login(c, "bob", PW.bob, "ldap");
      expect(refused.status).toBe(409);
      expect((refused.json as { message: string }).message).toContain("same name as a local user");
      expect((refused.json as { message: string }).message).toContain("coordinator.ldap.local_name_conflict");
      expect((await login(c, "bob", "wrong-password", "ldap")).json).toEqual(GENERIC_401);
    },
    60_000,
  );

  peerTest(
    "local_name_conflict link: the directory user logs in as the local user of that name, with its rights",
    NEEDS,
    async () => {
      await using dir = tempDir();
      await using c = await coordinator(dir.path, await ldapConfig({ local_name_conflict: "link" }));
      const admin = await login(c, "admin", ADMIN_PASSWORD);
      const adminToken = String((admin.json as { token: string }).token);
      const created = await c.fetch("POST", "/users", {
        token: adminToken,
        body: { username: "Bob", password: "local-bob-pw", is_admin: true },
      });
      expect(created.status).toBe(201);
      const localId = (dataOf(created) as { id: string }).id;
      const r = await login(c, "bob", PW.bob, "ldap");
      expect(r.status).toBe(201);
      // bob is only in voip-users in the directory; linked, the local row's admin flag and id are his
      expect(userOf(r)).toMatchObject({ id: localId, username: "Bob", is_admin: true, provider: "ldap" });
      // the local password still works, and a wrong directory password is the generic 401
      expect((await login(c, "Bob", "local-bob-pw")).status).toBe(201);
      expect((await login(c, "bob", "wrong-password", "ldap")).json).toEqual(GENERIC_401);
    },
    60_000,
  );

  peerTest(
    "wrong password, unknown user, user outside user_group: the same generic 401",
    NEEDS,
    async () => {
      await using dir = tempDir();
      await using c = await coordinator(dir.path, await ldapConfig());
      for (const [u, p] of [
        ["alice", "not-alice-pw"],
        ["nobody", "whatever"],
        ["dave", PW.dave],
      ] as const) {
        const r = await login(c, u, p, "ldap");
        expect({ u, status: r.status, body: r.json }).toEqual({ u, status: 401, body: GENERIC_401 });
      }
    },
    60_000,
  );

  peerTest(
    "filter injection: the username is escaped (RFC 4515), so wildcards and parentheses match nothing",
    NEEDS,
    async () => {
      await using dir = tempDir();
      await using c = await coordinator(dir.path, await ldapConfig());
      // unescaped, (uid=al*) would find alice alone and her password would log in
      for (const u of ["al*", "*)(uid=*", "*", "alice)(uid=bob"]) {
        const r = await login(c, u, PW.alice, "ldap");
        expect({ u, status: r.status, body: r.json }).toEqual({ u, status: 401, body: GENERIC_401 });
      }
      expect((await login(c, "alice", PW.alice, "ldap")).status).toBe(201);
    },
    60_000,
  );

  peerTest(
    "anonymous: bind with the user_dn template, no service account; groups read as the user",
    NEEDS,
    async () => {
      await using dir = tempDir();
      const cfg = await ldapConfig({
        anonymous: true,
        user_dn: `uid=%s,ou=people,${SUFFIX}`,
        bind_dn: "",
        bind_password: "",
      });
      await using c = await coordinator(dir.path, cfg);
      const alice = await login(c, "alice", PW.alice, "ldap");
      expect(alice.status).toBe(201);
      expect(userOf(alice)).toMatchObject({ username: "alice", email: "alice@example.org", is_admin: true });
      expect(userOf(await login(c, "bob", PW.bob, "ldap"))).toMatchObject({ username: "bob", is_admin: false });
      expect((await login(c, "bob", PW.alice, "ldap")).json).toEqual(GENERIC_401);
      expect((await login(c, "nobody", PW.alice, "ldap")).json).toEqual(GENERIC_401);
      // a DN built from "alice,ou=people" must not reach another entry
      expect((await login(c, `alice,ou=people,${SUFFIX}`, PW.alice, "ldap")).status).toBe(401);
    },
    60_000,
  );

  peerTest(
    "use_dn_for_group_search with a groupOfNames; admin_group as a DN",
    NEEDS,
    async () => {
      await using dir = tempDir();
      const cfg = await ldapConfig({
        group_filter: "(&(objectClass=groupOfNames)(member=%s))",
        use_dn_for_group_search: true,
        admin_group: `CN=ops, ou=groups,${SUFFIX}`,
        user_group: "",
      });
      await using c = await coordinator(dir.path, cfg);
      expect(userOf(await login(c, "carol", PW.carol, "ldap"))).toMatchObject({ username: "carol", is_admin: true });
      expect(userOf(await login(c, "alice", PW.alice, "ldap"))).toMatchObject({ username: "alice", is_admin: false });
    },
    60_000,
  );

  peerTest(
    "group lookup that fails: admin_mode and user_mode decide",
    NEEDS,
    async () => {
      await using dir = tempDir();
      const broken = { group_filter: "(memberUid=%s" }; // unbalanced: the search fails
      {
        await using c = await coordinator(
          dir.path,
          await ldapConfig({ ...broken, user_mode: false, admin_mode: false }),
        );
        expect((await login(c, "alice", PW.alice, "ldap")).status).toBe(401);
      }
      await using dir2 = tempDir();
      await using c2 = await coordinator(
        dir2.path,
        await ldapConfig({ ...broken, user_mode: true, admin_mode: false }),
      );
      expect(userOf(await login(c2, "dave", PW.dave, "ldap"))).toMatchObject({ username: "dave", is_admin: false });
      await using dir3 = tempDir();
      await using c3 = await coordinator(dir3.path, await ldapConfig({ ...broken, admin_mode: true }));
      expect(userOf(await login(c3, "dave", PW.dave, "ldap"))).toMatchObject({ username: "dave", is_admin: true });
    },
    60_000,
  );

  peerTest(
    "every host down → 503 naming each host tried and why, not 401; bind_password and passwords are never logged",
    NEEDS,
    async () => {
      await using dir = tempDir();
      const s = await server();
      const lines: string[] = [];
      configureLogging({ level: "debug", sink: { write: (l) => lines.push(l) } });
      try {
        await using c = await coordinator(dir.path, await ldapConfig({ host: `127.0.0.2 127.0.0.3:${s.port}` }));
        const r = await login(c, "alice", PW.alice, "ldap");
        expect(r.status).toBe(503);
        const body = r.json as { error: string; message: string; hosts_tried: string[] };
        expect(body.error).toBe("UNAVAILABLE");
        expect(body.hosts_tried).toEqual([`ldap://127.0.0.2:${s.port}`, `ldap://127.0.0.3:${s.port}`]);
        expect(body.message).toContain(`ldap://127.0.0.2:${s.port} (connection refused)`);
        expect(body.message).toContain(`ldap://127.0.0.3:${s.port} (connection refused)`);
        // nothing was checked, so the login throttle (5 failures) does not count these
        for (let i = 0; i < 6; i++) expect((await login(c, "alice", PW.alice, "ldap")).status).toBe(503);
        // one live host: the same login works, and a wrong password there is a 401 again
        await using dir2 = tempDir();
        await using c2 = await coordinator(dir2.path, await ldapConfig());
        expect((await login(c2, "alice", PW.alice, "ldap")).status).toBe(201);
        expect((await login(c2, "alice", "wrong-pw", "ldap")).status).toBe(401);
      } finally {
        configureLogging({ level: "error", sink: { write: (l) => process.stderr.write(`${l}\n`) } });
      }
      const log = lines.join("\n");
      expect(log).toContain("LDAP server could not be used");
      for (const secret of [SERVICE_PASSWORD, PW.alice, "wrong-pw"]) expect(log).not.toContain(secret);
    },
    60_000,
  );

  peerTest(
    "a host that accepts and never answers times out and the next host logs the user in",
    NEEDS,
    async () => {
      await using dir = tempDir();
      const sockets: Array<{ end(): void }> = [];
      const hung = Bun.listen({
        hostname: "127.0.0.1",
        port: 0,
        socket: { open: (sk) => void sockets.push(sk), data() {} },
      });
      try {
        await using c = await coordinator(dir.path, await ldapConfig({ host: `127.0.0.1:${hung.port} 127.0.0.1` }));
        const r = await login(c, "alice", PW.alice, "ldap");
        expect(r.status).toBe(201);
        expect(sockets.length).toBe(1); // the hung host was asked first
      } finally {
        for (const sk of sockets) sk.end();
        hung.stop(true);
      }
    },
    60_000,
  );

  peerTest(
    "StartTLS is issued unless skip_tls: skipped, this slapd refuses the bind (it requires TLS)",
    NEEDS,
    async () => {
      await using dir = tempDir();
      await using c = await coordinator(dir.path, await ldapConfig({ host: "127.0.0.1", skip_tls: true }));
      const r = await login(c, "alice", PW.alice, "ldap");
      expect(r.status).toBe(503);
      expect((r.json as { message: string }).message).toMatch(/bind as bind_dn failed: .*confidentiality required/i);
    },
    60_000,
  );

  peerTest(
    "LDAPS (use_ssl) logs in, with the dead host first",
    NEEDS,
    async () => {
      await using dir = tempDir();
      const s = await server();
      await using c = await coordinator(dir.path, await ldapConfig({ use_ssl: true, port: s.ldapsPort }));
      const r = await login(c, "alice", PW.alice, "ldap");
      expect(r.status).toBe(201);
      expect(userOf(r)).toMatchObject({ username: "alice", is_admin: true });
    },
    60_000,
  );

  peerTest(
    "insecure_skip_verify false with a self-signed certificate: 503 naming TLS, for StartTLS and LDAPS",
    NEEDS,
    async () => {
      await using dir = tempDir();
      const s = await server();
      await using c = await coordinator(dir.path, await ldapConfig({ host: "127.0.0.1", insecure_skip_verify: false }));
      const r = await login(c, "alice", PW.alice, "ldap");
      expect(r.status).toBe(503);
      expect((r.json as { message: string }).message).toMatch(
        new RegExp(`ldap://127\\.0\\.0\\.1:${s.port} \\(TLS: StartTLS failed: .*certificate`),
      );
      await using dir2 = tempDir();
      await using c2 = await coordinator(
        dir2.path,
        await ldapConfig({ host: "127.0.0.1", insecure_skip_verify: false, use_ssl: true, port: s.ldapsPort }),
      );
      const r2 = await login(c2, "alice", PW.alice, "ldap");
      expect(r2.status).toBe(503);
      expect((r2.json as { message: string }).message).toMatch(
        new RegExp(`ldaps://127\\.0\\.0\\.1:${s.ldapsPort} \\(TLS: LDAPS bind as bind_dn failed: .*certificate`),
      );
    },
    60_000,
  );

  peerTest(
    "fallback_auth_type both ways, and internal when every LDAP host is down",
    NEEDS,
    async () => {
      const s = await server();
      {
        // internal → ldap: an LDAP user logging in with the default type
        await using dir = tempDir();
        await using plain = await coordinator(dir.path, await ldapConfig());
        expect((await login(plain, "alice", PW.alice)).status).toBe(401);
        await using dir2 = tempDir();
        await using c = await coordinator(dir2.path, await ldapConfig(), { fallback_auth_type: "ldap" });
        const r = await login(c, "alice", PW.alice);
        expect(r.status).toBe(201);
        expect(userOf(r)).toMatchObject({ username: "alice", provider: "ldap", is_admin: true });
        // HOMER's legacy v3 login takes the same fallback (docs/AUTH.md "Legacy v3 login").
        const v3 = await fetch(`${c.url}/api/v3/auth`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ username: "alice", password: PW.alice }),
        });
        expect(v3.status).toBe(201);
        expect(((await v3.json()) as { user: { provider: string } }).user.provider).toBe("ldap");
      }
      {
        // ldap → internal: the internal admin logging in with type ldap
        await using dir = tempDir();
        await using plain = await coordinator(dir.path, await ldapConfig());
        expect((await login(plain, "admin", ADMIN_PASSWORD, "ldap")).status).toBe(401);
        await using dir2 = tempDir();
        await using c = await coordinator(dir2.path, await ldapConfig(), { fallback_auth_type: "internal" });
        const r = await login(c, "admin", ADMIN_PASSWORD, "ldap");
        expect(r.status).toBe(201);
        expect(userOf(r)).toMatchObject({ username: "admin", provider: "internal" });
        // LDAP down: internal still lets the admin in; a login nobody accepted is the 503
        await using dir3 = tempDir();
        await using down = await coordinator(dir3.path, await ldapConfig({ host: `127.0.0.2:${s.port}` }), {
          fallback_auth_type: "internal",
        });
        expect((await login(down, "admin", ADMIN_PASSWORD, "ldap")).status).toBe(201);
        expect((await login(down, "alice", PW.alice, "ldap")).status).toBe(503);
        // internal said "wrong password": counted by the throttle even though LDAP was down
        await using dir4 = tempDir();
        const throttled = { fallback_auth_type: "internal", max_failed_logins: 2 };
        await using t = await coordinator(dir4.path, await ldapConfig({ host: `127.0.0.2:${s.port}` }), throttled);
        const statuses: number[] = [];
        for (let i = 0; i < 3; i++) statuses.push((await login(t, "admin", "guess-" + i, "ldap")).status);
        expect(statuses).toEqual([503, 503, 429]);
      }
    },
    60_000,
  );

  peerTest(
    "/auth/providers lists LDAP with its position; auth.type ldap is accepted at start",
    NEEDS,
    async () => {
      await using dir = tempDir();
      await using c = await coordinator(dir.path, await ldapConfig({ position: 0 }), {
        internal_position: 2,
        type: "ldap",
      });
      const p = await c.fetch("GET", "/auth/providers");
      expect(dataOf(p).ldap).toEqual({ enable: true, name: "LDAP", position: 0, type: "ldap" });
      expect((dataOf(p).internal as { position: number }).position).toBe(2);
    },
    60_000,
  );
});
