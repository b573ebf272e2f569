import { describe, expect, test } from "bun:test";
import { FLAGS } from "./options.ts";
import { checkProfileFile, profileForm, showProfileFile } from "./profile-cmd.ts";
import { exampleProfile, keysTable, PROFILE_FORMS } from "./profile-init.ts";
import { PROFILE_KEYS } from "./profile-keys.ts";

const DIR = "/profiles";
const check = (json: Record<string, unknown>, argv: string[] = []) => checkProfileFile(json, "p.json", DIR, argv);
const show = (json: Record<string, unknown>, argv: string[] = []) =>
  JSON.parse(showProfileFile(json, "p.json", DIR, argv));
const server = { scenario_name: "uas", listeners: [{ local_port: 5070 }], api_addr: "127.0.0.1:8081" };

describe("profile init examples", () => {
  test.each(PROFILE_FORMS.map((f) => [f]))("the %s example is of its form and passes check", (form) => {
    const json = exampleProfile(form);
    expect(profileForm(json)).toBe(form);
    const lines = check(json);
    const expected =
      form === "alias"
        ? Object.keys(json.aliases as object).length
        : form === "flat"
          ? 1
          : 1 + (json.clients as unknown[]).length;
    expect(lines).toHaveLength(expected);
  });

  test("check lists each alias, sorted, with mode, scenario, transport, remote or binds, and rate", () => {
    expect(check(exampleProfile("alias"))).toEqual([
      "alias calls: mode=load scenario=uac transport=u1 remote=127.0.0.1:5060 rate=10/s total=1000",
      "alias options: mode=load scenario=options transport=u1 remote=127.0.0.1:5060 rate=1/s total=unlimited",
      "alias register: mode=load scenario=register transport=u1 remote=127.0.0.1:5060 rate=5/s total=100",
      "alias uas: mode=management scenario=uas transport=u1 binds=udp/127.0.0.1:5060 api=127.0.0.1:8080",
    ]);
  });

  test("check of a composite file names every engine; the command line applies to the server", () => {
    expect(check(exampleProfile("composite"), ["-p", "0"])).toEqual([
      "engine server: mode=management scenario=uas transport=u1 binds=udp/127.0.0.1:5060,tcp/127.0.0.1:5060 api=127.0.0.1:8080",
      "engine calls-udp: mode=load scenario=uac transport=u1 remote=127.0.0.1:5060 rate=10/s total=1000",
      "engine calls-tcp: mode=load scenario=uac transport=t1 remote=127.0.0.1:5060 rate=5/s total=500",
    ]);
    expect(check({ scenario_name: "uas" }, ["-p", "0", "-users", "3"])).toEqual([
      "engine server: mode=management scenario=uas transport=u1 binds=udp/127.0.0.1:0 api=127.0.0.1:8080",
    ]);
    expect(check({ remote_addr: "h:5080", users: 4 })).toEqual([
      "engine client: mode=load scenario=uac transport=u1 remote=h:5080 users=4 total=unlimited",
    ]);
  });
});

describe("profile check errors name the file, the alias or engine, and the problem", () => {
  test.each([
    [
      { aliases: { a: { remote_addr: "h" }, b: { remote_addr: "h", bogus: 1 } } },
      'p.json: alias b: unknown key "bogus"',
    ],
    [{ aliases: { a: { remote_addr: "h", extra_args: ["-zz"] } } }, "p.json: alias a: unknown flag -zz"],
    [
      { aliases: { a: { remote_addr: "h", scenario_name: "subscribe" } } },
      'p.json: alias a: unknown scenario "subscribe"',
    ],
    [{ aliases: { a: { remote_addr: "h", transport: "s1" } } }, 'p.json: alias a: transport "s1" is not one of'],
    [{ aliases: { a: { scenario_name: "uac" } } }, "p.json: alias a: scenario uac needs the remote address"],
    [{ aliases: { a: { remote_addr: "h:sip" } } }, 'p.json: alias a: -rsa "h:sip" is not host:port'],
    [{ aliases: { a: { remote_addr: "h", hep_addr: "h:x" } } }, 'p.json: alias a: -hep_addr "h:x" is not host:port'],
    [
      { aliases: { a: { remote_addr: "h", extra_args: ["-stat_period", "often"] } } },
      'p.json: alias a: invalid duration "often"',
    ],
    [
      { aliases: { a: { remote_addr: "h", log_otel_endpoint: "collector:4318" } } },
      "p.json: alias a: log_otel_endpoint must be the full http(s) URL",
    ],
    [
      {
        aliases: {
          a: { remote_addr: "h", auth: { type: "internal", sqlite_path: "u.db", jwt_secret: "0123456789abcdef" } },
        },
      },
      "p.json: alias a: auth.type internal needs the control API",
    ],
    [
      { aliases: { a: { remote_addr: "h", auth: { type: "internal", sqlite_path: "u.db", jwt_secret: "short" } } } },
      "p.json: alias a: auth.jwt_secret must be at least 16 characters",
    ],
    [
      { aliases: { a: { server: true, listeners: [{ local_port: 5070 }, { local_port: 5070 }] } } },
      "p.json: alias a: duplicate bind udp 127.0.0.1:5070",
    ],
    [
      { aliases: { a: { server: true, local_port: 5070, transport: "l1" } } },
      "p.json: alias a: a TLS listener (127.0.0.1:5070) needs tls_cert and tls_key",
    ],
    [{ aliases: {} }, 'p.json: the "aliases" object is empty'],
    [{ aliases: { a: { remote_addr: "h" } }, rate: 5 }, 'p.json: unknown top-level key "rate" in an alias file'],
    [{ server: "yes" }, 'p.json: "server" must be true or false'],
    [{ scenario_name: "register" }, 'p.json: cannot tell a management profile from a load profile; set "role"'],
    [{ workloads: [] }, 'p.json: the top-level "workloads" key was removed'],
    [{ server, role: "server", clients: [] }, 'p.json: "role" applies to flat profiles only'],
    [
      { server, clients: [{ remote_addr: "h", scenario_name: "invite" }] },
      'p.json: engine client-1: unknown scenario "invite"',
    ],
    [
      { server, clients: [{ remote_addr: "h", local_port: 5070 }] },
      "p.json: duplicate bind udp 127.0.0.1:5070 (server and client-1)",
    ],
    [
      { server, clients: [{ id: "c", remote_addr: "h", api_token: "t" }] },
      "p.json: client 1: api_addr, api_token and auth apply to the server only",
    ],
    [{ ...server, api_addr: "localhost:api" }, 'p.json: engine server: api_addr "localhost:api" is not host:port'],
  ])("%j", (json, message) => {
    expect(() => check(json as Record<string, unknown>)).toThrow(message);
  });

  test("the first broken alias (in name order) is the one reported", () => {
    expect(() => check({ aliases: { z: { bogus: 1 }, m: { remote_addr: "h", rate: "fast" } } })).toThrow(
      'p.json: alias m: "rate" must be a number',
    );
  });
});

describe("profile show", () => {
  const secrets = {
    aliases: {
      calls: {
        remote_addr: "h:5060",
        auth_username: "1000",
        auth_password: "pw-alias",
        hep_addr: "127.0.0.1:9060",
        hep_password: "hep-secret",
        api_token: "tok-secret",
        rate: 5,
        extra_args: ["-r", "7"],
      },
      srv: {
        server: true,
        api_addr: "127.0.0.1:8090",
        auth: { type: "internal", sqlite_path: "users.db", jwt_secret: "jwt-secret-0123456789" },
      },
    },
  };

  test("secrets are masked; unset secrets stay empty", () => {
    const text = showProfileFile(secrets, "p.json", DIR, ["calls"]);
    for (const s of ["pw-alias", "hep-secret", "tok-secret"]) expect(text).not.toContain(s);
    const shown = JSON.parse(text);
    const o = shown.engines[0].options;
    expect([o.auth_password, o.hep_password, o.api_token, o.auth_username, shown.api_token]).toEqual([
      "***",
      "***",
      "***",
      "1000",
      "***",
    ]);
    const srv = showProfileFile(secrets, "p.json", DIR, ["srv"]);
    expect(srv).not.toContain("jwt-secret-0123456789");
    expect(JSON.parse(srv).auth).toEqual({ type: "internal", sqlite_path: "/profiles/users.db", jwt_secret: "***" });
    const plain = show({ remote_addr: "h", auth_password: "" }).engines[0].options;
    expect([plain.auth_password, plain.hep_password, plain.api_token]).toEqual(["", "", ""]);
  });

  test("the four merge steps: defaults ← profile ← extra_args ← the command line after the alias", () => {
    expect(show(secrets, ["calls"]).engines[0].options.rate).toBe(7);
    const s = show(secrets, ["calls", "-r", "9", "-ap", "cli-pw", "10.0.0.2:5070"]);
    expect([s.form, s.alias, s.engines[0].id, s.engines[0].mode]).toEqual(["alias", "calls", "calls", "load"]);
    expect([s.engines[0].options.rate, s.engines[0].options.remote_addr, s.engines[0].options.max_concurrent]).toEqual([
      9,
      "10.0.0.2:5070",
      0,
    ]);
    expect(JSON.stringify(s)).not.toContain("cli-pw");
  });

  test("relative scenario files become absolute; an ephemeral local_port shows as null; management defaults appear", () => {
    const flat = show({ remote_addr: "h", scenario_file: "calls.xml", injection_file: "/data/users.csv" });
    expect([
      flat.form,
      flat.engines[0].options.scenario_file,
      flat.engines[0].options.injection_file,
      flat.engines[0].options.local_port,
    ]).toEqual(["flat", "/profiles/calls.xml", "/data/users.csv", null]);
    const mgmt = show({ scenario_name: "uas" });
    expect([mgmt.engines[0].mode, mgmt.engines[0].options.local_port, mgmt.api_addr]).toEqual([
      "management",
      5060,
      "127.0.0.1:8080",
    ]);
  });

  test("a composite file shows every engine; the command line goes to the server only", () => {
    const s = show(exampleProfile("composite"), ["-hep_capture_id", "77"]);
    expect(s.engines.map((e: { id: string; mode: string }) => `${e.id}:${e.mode}`)).toEqual([
      "server:management",
      "calls-udp:load",
      "calls-tcp:load",
    ]);
    expect(s.engines.map((e: { options: { hep_capture_id: number } }) => e.options.hep_capture_id)).toEqual([
      77, 2001, 2001,
    ]);
    expect(s.engines[1].options.hep_addr).toBe("127.0.0.1:9060");
  });

  test("an alias file needs the alias name right after the file, listing the names", () => {
    expect(() => show(secrets)).toThrow("p.json: name the alias to show after the file (known: calls, srv)");
    expect(() => show(secrets, ["-r", "5"])).toThrow("(known: calls, srv)");
    expect(() => show(secrets, ["nope"])).toThrow('p.json: unknown alias "nope" (known: calls, srv)');
  });
});

describe("profile keys", () => {
  const rows = keysTable();
  const row = (key: string) => rows.find((r) => r.startsWith(`${key} `)) ?? "";

  test("one row per profile key after the header", () => {
    expect(rows[0]).toMatch(/^KEY +TYPE +FLAG OR MEANING$/);
    expect(rows.slice(1).map((r) => r.split(/ +/)[0])).toEqual(Object.keys(PROFILE_KEYS));
  });

  test("types and flags", () => {
    expect(row("scenario_file").split(/ +/)).toEqual(["scenario_file", "string", "-sf"]);
    expect(row("total_calls").split(/ +/)).toEqual(["total_calls", "int", "-m"]);
    expect(row("ip_field").split(/ +/)).toEqual(["ip_field", "int", "-ip_field", "-ipfield"]);
    expect(row("listeners")).toMatch(/^listeners +object\[\] +management: binds/);
    expect(row("extra_args")).toMatch(/^extra_args +string\[\] /);
    expect(row("send_media_report").split(/ +/)).toEqual(["send_media_report", "bool", "-send_media_report"]);
  });

  test("every flag that sets a profile key is listed on that key's row", () => {
    for (const [flag, def] of Object.entries(FLAGS)) {
      if (!(def.key in PROFILE_KEYS)) continue;
      expect(row(def.key).split(/ +/).slice(2)).toContain(`-${flag}`);
    }
  });
});
