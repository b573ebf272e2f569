import { describe, expect, test } from "bun:test";
import { escapeDnValue, escapeFilterValue, fillTemplate } from "./escape.ts";
import { describeFailure, ldapTargets, tlsOptions } from "./hosts.ts";
import { decideRole, inGroup } from "./roles.ts";
import { loadConfig } from "../../config/index.ts";

const ldap = (over: Record<string, unknown>) =>
  loadConfig({ json: { coordinator: { ldap: over } }, env: {} }).config.coordinator.ldap;

describe("LDAP escaping (RFC 4515 filter values, RFC 4514 DN values)", () => {
  test.each([
    ["alice", "alice"],
    ["*)(uid=*", "\\2a\\29\\28uid=\\2a"],
    ["a\\b", "a\\5cb"],
    ["nul\0", "nul\\00"],
    ["jörg", "jörg"],
  ])("filter %j → %j", (raw, escaped) => expect(escapeFilterValue(raw)).toBe(escaped));

  test.each([
    ["alice", "alice"],
    ["a,ou=admins", "a\\,ou\\=admins"],
    ['x+y"z;<>', 'x\\+y\\"z\\;\\<\\>'],
    ["#lead", "\\#lead"],
    [" both ", "\\ both\\ "],
    ["back\\slash", "back\\\\slash"],
  ])("DN value %j → %j", (raw, escaped) => expect(escapeDnValue(raw)).toBe(escaped));

  test("every %s of a template is filled", () => {
    expect(fillTemplate("(|(uid=%s)(mail=%s))", escapeFilterValue("a*"))).toBe("(|(uid=a\\2a)(mail=a\\2a))");
  });
});

describe("LDAP hosts", () => {
  test("space-separated, in order, with the configured port unless one is given", () => {
    expect(ldapTargets(ldap({ host: " ldap1  10.0.0.2:1389 [::1]:636 ::1 ", port: 389 })).map((t) => t.url)).toEqual([
      "ldap://ldap1:389",
      "ldap://10.0.0.2:1389",
      "ldap://[::1]:636",
      "ldap://[::1]:389",
    ]);
    expect(ldapTargets(ldap({ host: "ldap1", port: 636, use_ssl: true }))[0]?.url).toBe("ldaps://ldap1:636");
  });

  test("TLS name: server_name, else the host when it is a name; verification unless insecure_skip_verify", () => {
    const [byName, byIp] = ldapTargets(ldap({ host: "ldap1.example.org 10.0.0.2" })) as [
      ReturnType<typeof ldapTargets>[0],
      ReturnType<typeof ldapTargets>[0],
    ];
    expect(tlsOptions(ldap({}), byName)).toEqual({ rejectUnauthorized: true, servername: "ldap1.example.org" });
    expect(tlsOptions(ldap({}), byIp)).toEqual({ rejectUnauthorized: true });
    expect(tlsOptions(ldap({ server_name: "dir.example.org", insecure_skip_verify: true }), byIp)).toEqual({
      rejectUnauthorized: false,
      servername: "dir.example.org",
    });
  });

  test("failure reasons are short and name TLS", () => {
    expect(
      describeFailure(
        "user search",
        Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }),
      ),
    ).toBe("connection refused");
    expect(
      describeFailure(
        "StartTLS",
        Object.assign(new Error("self-signed certificate"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" }),
      ),
    ).toBe("TLS: StartTLS failed: self-signed certificate");
  });
});

describe("LDAP groups decide the role", () => {
  const rules = { adminGroup: "admins", userGroup: "cn=Users,ou=groups,dc=x", adminMode: false, userMode: false };
  test("names match the first RDN value; DNs match whole, case and spaces aside", () => {
    expect(inGroup(["cn=Admins,ou=groups,dc=x"], "admins")).toBe(true);
    expect(inGroup(["cn=admins-old,ou=groups,dc=x"], "admins")).toBe(false);
    expect(inGroup(["CN=users, OU=groups, DC=x"], "cn=users,ou=groups,dc=x")).toBe(true);
    expect(inGroup(["cn=users,ou=other,dc=x"], "cn=users,ou=groups,dc=x")).toBe(false);
  });
  test.each([
    [["cn=admins,dc=x"], rules, { allowed: true, isAdmin: true }],
    [["cn=users,ou=groups,dc=x"], rules, { allowed: true, isAdmin: false }],
    [["cn=other,dc=x"], rules, { allowed: false, isAdmin: false }],
    [["cn=other,dc=x"], { ...rules, userGroup: "" }, { allowed: true, isAdmin: false }],
    [[], rules, { allowed: false, isAdmin: false }],
    [undefined, { ...rules, userMode: true }, { allowed: true, isAdmin: false }],
    [undefined, { ...rules, adminMode: true }, { allowed: true, isAdmin: true }],
    [["cn=other,dc=x"], { ...rules, adminMode: true, userMode: true }, { allowed: false, isAdmin: false }],
  ] as const)("groups %j", (groups, r, want) => {
    expect(decideRole(groups as string[] | undefined, r)).toMatchObject(want);
  });
});
