import { describe, expect, test } from "bun:test";
import { DEFAULT_OPTIONS } from "./options.ts";
import { inferMode } from "./profile-keys.ts";
import { aliasNames, mergeOptions, planAlias, planFlat } from "./profile.ts";

const DIR = "/profiles";
const flat = (json: Record<string, unknown>, argv: string[] = []) => planFlat(json, "p.json", DIR, argv);
const alias = (aliases: Record<string, unknown>, name: string, argv: string[] = []) =>
  planAlias({ aliases }, "a.json", DIR, name, argv);

describe("management or load inference (flat profiles)", () => {
  test.each([
    [{ listeners: [{ local_port: 5070 }] }, "management"],
    [{ api_addr: "127.0.0.1:9000" }, "management"],
    [{ scenario_name: "management" }, "management"],
    [{ scenario_name: "UAS" }, "management"],
    [{ scenario_name: "uac", remote_addr: "10.0.0.1:5060" }, "load"],
    [{ remote_addr: "10.0.0.1:5060" }, "load"],
    [{ role: "load", listeners: [{ local_port: 5070 }] }, "load"],
    [{ role: "client" }, "load"],
    [{ role: "uac" }, "load"],
    [{ role: "server", remote_addr: "10.0.0.1" }, "management"],
    [{ role: "Management" }, "management"],
    // "server": true/false decides after role, before the heuristics.
    [{ server: true }, "management"],
    [{ server: true, remote_addr: "10.0.0.1:5060" }, "management"],
    [{ server: false, scenario_name: "uas", remote_addr: "10.0.0.1:5060" }, "load"],
    [{ server: false, scenario_name: "register", remote_addr: "10.0.0.1" }, "load"],
    [{ role: "load", server: true }, "load"],
    [{ role: "management", server: false }, "management"],
  ])("%j → %s", (p, mode) => {
    expect(inferMode("p.json", p)).toBe(mode as "load");
  });

  test("a top-level server object means management", () => {
    expect(inferMode("p.json", {}, true)).toBe("management");
  });

  test.each([
    [{}],
    [{ scenario_name: "register", remote_addr: "10.0.0.1" }],
    [{ scenario_name: "uac" }],
    [{ listeners: [] }],
  ])("ambiguous %j asks for role", (p) => {
    expect(() => inferMode("p.json", p)).toThrow(/set "role" to "management" or "load"/);
  });

  test("an unknown role is an error naming the choices", () => {
    expect(() => inferMode("p.json", { role: "proxy" })).toThrow(
      /role must be management, server, load, client or uac/,
    );
  });
});

describe("flat profiles", () => {
  test("management mode listens on 5060 and the control API on 127.0.0.1:8080 unless told otherwise", () => {
    const p = flat({ scenario_name: "uas" });
    expect(p.engines).toHaveLength(1);
    expect(p.engines[0]!.mode).toBe("management");
    expect(p.engines[0]!.opts.local_port).toBe(5060);
    expect(p.api_addr).toBe("127.0.0.1:8080");
  });

  test("-p 0 forces an ephemeral port in management mode; a profile local_port is kept", () => {
    expect(flat({ scenario_name: "uas" }, ["-p", "0"]).engines[0]!.opts.local_port).toBe(0);
    expect(flat({ scenario_name: "uas", local_port: 5090 }).engines[0]!.opts.local_port).toBe(5090);
  });

  test("load mode keeps an ephemeral port and no control API", () => {
    const p = flat({ remote_addr: "127.0.0.1:5060" });
    expect(p.engines[0]!.mode).toBe("load");
    expect(p.engines[0]!.opts.local_port).toBeUndefined();
    expect(p.api_addr).toBe("");
  });

  test("a top-level aliases key is rejected with the alias form", () => {
    expect(() => flat({ aliases: {} })).toThrow(/loadgen -config p.json -run-alias <name>/);
  });

  test("the removed workloads key points to the composite form", () => {
    expect(() => flat({ workloads: [] })).toThrow(/"workloads" key was removed.*"server" object and "clients"/);
  });

  test('"server": true runs a flat profile in management mode, false in load mode', () => {
    const m = flat({ server: true, rate: 5 });
    expect([m.engines[0]!.mode, m.engines[0]!.opts.local_port, m.api_addr]).toEqual([
      "management",
      5060,
      "127.0.0.1:8080",
    ]);
    const l = flat({ server: false, scenario_name: "options", remote_addr: "127.0.0.1:5060" });
    expect([l.engines[0]!.id, l.engines[0]!.mode, l.api_addr]).toEqual(["client", "load", ""]);
  });

  test("an ambiguous flat profile asks for role", () => {
    expect(() => flat({ rate: 5 })).toThrow(/set "role"/);
  });

  test.each([
    [{ role: "load", remote_addr: "x", nonsense: 1 }, /unknown key "nonsense"/],
    [{ role: "load", rate: "fast" }, /"rate" must be a number/],
    [{ role: "load", local_port: 1.5 }, /"local_port" must be a whole number/],
    [{ role: "load", trace_msg: "yes" }, /"trace_msg" must be true or false/],
    [{ role: "load", extra_args: "-r 5" }, /"extra_args" must be an array of strings/],
    [{ role: "load", stat_period: "5 parsecs" }, /invalid duration/],
    [{ role: "management", listeners: [{ port: 5060 }] }, /unknown key listeners\[0\]\.port/],
    [{ role: "load", auth: { type: "ldap" } }, /auth.type must be "internal" or "none"/],
    [{ role: "load", auth: { type: "internal", jwt_secret: "short" } }, /jwt_secret must be at least 16 characters/],
    [
      { role: "load", auth: { type: "internal", jwt_secret: "0123456789abcdef" } },
      /auth.sqlite_path \(the users database\) is required/,
    ],
    [{ role: "load", log_otel_proto: "udp" }, /log_otel_proto must be http or grpc/],
    [{ role: "load", ip_field: -1 }, /"ip_field" must be a whole number ≥ 0/],
    [{ role: "load", ip_field: "1" }, /"ip_field" must be a whole number ≥ 0/],
  ])("bad profile %j", (p, message) => {
    expect(() => flat(p)).toThrow(message);
  });

  test("auth type none and an omitted type are accepted", () => {
    expect(flat({ role: "load", remote_addr: "x", auth: { type: "none" } }).engines).toHaveLength(1);
    expect(flat({ role: "load", remote_addr: "x", auth: {} }).engines).toHaveLength(1);
  });

  test("internal users: sqlite_path resolves against the profile's folder; a client may not carry auth", () => {
    const auth = { type: "internal", sqlite_path: "users.db", jwt_secret: "0123456789abcdef" };
    expect(flat({ scenario_name: "uas", auth }).auth).toEqual({
      sqlite_path: "/profiles/users.db",
      jwt_secret: "0123456789abcdef",
    });
    expect(flat({ scenario_name: "uas", auth: { type: "none" } }).auth).toBeUndefined();
    expect(flat({ auth, server: { scenario_name: "uas" }, clients: [{ remote_addr: "h:1" }] }).auth?.sqlite_path).toBe(
      "/profiles/users.db",
    );
    expect(() => flat({ server: { scenario_name: "uas" }, clients: [{ remote_addr: "h:1", auth }] })).toThrow(
      /api_addr, api_token and auth apply to the server only/,
    );
  });

  test("duplicate listener binds are rejected", () => {
    expect(() => flat({ listeners: [{ local_port: 5070 }, { local_port: 5070, transport: "u1" }] })).toThrow(
      /duplicate bind udp 127\.0\.0\.1:5070/,
    );
    expect(
      flat({ listeners: [{ local_port: 5070 }, { local_port: 5070, local_ip: "127.0.0.2" }] }).engines,
    ).toHaveLength(1);
  });
});

describe("merge order: defaults ← profile ← extra_args ← command line", () => {
  test("each later step wins", () => {
    expect(mergeOptions({}, DIR, "load", []).rate).toBe(DEFAULT_OPTIONS.rate);
    expect(mergeOptions({ rate: 5 }, DIR, "load", []).rate).toBe(5);
    expect(mergeOptions({ rate: 5, extra_args: ["-r", "7"] }, DIR, "load", []).rate).toBe(7);
    expect(mergeOptions({ rate: 5, extra_args: ["-r", "7"] }, DIR, "load", ["-r", "9"]).rate).toBe(9);
  });

  test("total_calls 0 in a profile is explicit (unlimited) and survives until a later step sets it", () => {
    expect(mergeOptions({ total_calls: 0, extra_args: ["-m", "3"] }, DIR, "load", []).total_calls).toBe(3);
    expect(mergeOptions({ total_calls: 4 }, DIR, "load", ["-m", "0"]).total_calls).toBe(0);
  });

  test("relative scenario_file and injection_file resolve against the profile's folder; absolute ones stay", () => {
    const o = mergeOptions({ scenario_file: "sc/uac.xml", injection_file: "users.csv" }, DIR, "load", []);
    expect(o.scenario_file).toBe("/profiles/sc/uac.xml");
    expect(o.injection_file).toBe("/profiles/users.csv");
    expect(mergeOptions({ scenario_file: "/abs/x.xml" }, DIR, "load", []).scenario_file).toBe("/abs/x.xml");
    // A command-line path is the user's own, relative to where they run it.
    expect(mergeOptions({ scenario_file: "a.xml" }, DIR, "load", ["-sf", "b.xml"]).scenario_file).toBe("b.xml");
  });

  test("ip_field: profile ← extra_args (-ipfield) ← command line (-ip_field), transport ui alike", () => {
    expect(mergeOptions({}, DIR, "load", []).ip_field).toBe(-1);
    expect(mergeOptions({ ip_field: 1, transport: "ui" }, DIR, "load", [])).toMatchObject({
      ip_field: 1,
      transport: "ui",
    });
    expect(mergeOptions({ ip_field: 1, extra_args: ["-ipfield", "2"] }, DIR, "load", []).ip_field).toBe(2);
    expect(mergeOptions({ ip_field: 1, extra_args: ["-ipfield", "2"] }, DIR, "load", ["--ip_field=3"]).ip_field).toBe(
      3,
    );
    expect(() => mergeOptions({}, DIR, "load", ["-ip_field", "one"])).toThrow(
      /-ip_field needs a whole number, got "one"/,
    );
  });

  test("a positional remote address wins over remote_addr", () => {
    expect(mergeOptions({ remote_addr: "10.0.0.1:5060" }, DIR, "load", ["10.0.0.2:5070"]).remote_addr).toBe(
      "10.0.0.2:5070",
    );
  });
});

describe("alias files", () => {
  const aliases = {
    zeta: { remote_addr: "127.0.0.1:5060", rate: 3 },
    alpha: { server: true, scenario_name: "uas" },
    mid: { scenario_name: "options", remote_addr: "h" },
  };

  test("-list-aliases names are sorted", () => {
    expect(aliasNames({ aliases }, "a.json")).toEqual(["alpha", "mid", "zeta"]);
  });

  test("an alias applies its keys; server: true requests management mode", () => {
    expect(alias(aliases, "zeta").engines[0]!.opts.rate).toBe(3);
    const m = alias(aliases, "alpha");
    expect(m.engines[0]!.mode).toBe("management");
    expect(m.engines[0]!.opts.local_port).toBe(5060);
    expect(alias(aliases, "mid").engines[0]!.mode).toBe("load");
  });

  test("an unknown alias names the known ones", () => {
    expect(() => alias(aliases, "nope")).toThrow(/unknown alias "nope" \(known: alpha, mid, zeta\)/);
  });

  test("a file without aliases points to the flat form", () => {
    expect(() => planAlias({ rate: 1 }, "a.json", DIR, "x", [])).toThrow(/loadgen server -config a.json/);
  });
});

describe("composite files", () => {
  const server = { scenario_name: "uas", local_port: 5080 };

  test("root keys merge shallowly into the server and every client; reserved keys never appear", () => {
    const p = flat({
      rate: 42,
      hep_addr: "127.0.0.1:9060",
      server,
      clients: [
        { remote_addr: "127.0.0.1:5080", id: "c1" },
        { remote_addr: "127.0.0.1:5080", rate: 7 },
      ],
    });
    expect(p.engines.map((e) => [e.id, e.mode, e.opts.rate, e.opts.hep_addr])).toEqual([
      ["server", "management", 42, "127.0.0.1:9060"],
      ["c1", "load", 42, "127.0.0.1:9060"],
      ["client-2", "load", 7, "127.0.0.1:9060"],
    ]);
    for (const e of p.engines)
      for (const k of ["server", "clients", "client", "workloads", "aliases"])
        expect(k in e.opts && (e.opts as unknown as Record<string, unknown>)[k] !== false).toBe(false);
  });

  test("client may be one object or an array; clients and client together are rejected", () => {
    expect(flat({ server, client: { remote_addr: "h:1" } }).engines).toHaveLength(2);
    expect(flat({ server, client: [{ remote_addr: "h:1" }, { remote_addr: "h:2" }] }).engines).toHaveLength(3);
    expect(() => flat({ server, client: {}, clients: [] })).toThrow(/"clients" or "client", not both/);
    expect(() => flat({ server, clients: { remote_addr: "h" } })).toThrow(/"clients" must be an array/);
  });

  test("the server must infer as management", () => {
    expect(() => flat({ server: { remote_addr: "h:1" }, clients: [] })).toThrow(
      /server profile must be a management profile/,
    );
  });

  test("api_addr and api_token apply to the server only", () => {
    const p = flat({ api_addr: "127.0.0.1:0", api_token: "t0k", server, clients: [{ remote_addr: "h:1" }] });
    expect(p.api_addr).toBe("127.0.0.1:0");
    expect(p.api_token).toBe("t0k");
    expect(p.engines[1]!.opts.api_addr).toBe("");
    expect(() => flat({ server, clients: [{ remote_addr: "h:1", api_token: "x" }] })).toThrow(
      /apply to the server only/,
    );
  });

  test("a client needs remote_addr", () => {
    expect(() => flat({ server, clients: [{ rate: 3 }] })).toThrow(/client 1: a client needs remote_addr/);
  });

  test("role belongs to flat profiles only", () => {
    expect(() => flat({ role: "management", server, clients: [] })).toThrow(/"role" applies to flat profiles only/);
    expect(() => flat({ server: { ...server, role: "management" } })).toThrow(/"role" applies to flat profiles only/);
  });

  test("duplicate binds across profiles are rejected; distinct client ports pass", () => {
    expect(() => flat({ server, clients: [{ remote_addr: "h:1", local_port: 5080 }] })).toThrow(
      /duplicate bind udp 127\.0\.0\.1:5080 \(server and client-1\)/,
    );
    expect(() =>
      flat({
        server,
        clients: [
          { remote_addr: "h:1", local_port: 6000 },
          { remote_addr: "h:1", local_port: 6000 },
        ],
      }),
    ).toThrow(/duplicate bind/);
    expect(
      flat({
        server,
        clients: [
          { remote_addr: "h:1", local_port: 6000 },
          { remote_addr: "h:1", local_port: 6001 },
        ],
      }).engines,
    ).toHaveLength(3);
  });

  test("engine ids must be distinct", () => {
    expect(() =>
      flat({
        server,
        clients: [
          { remote_addr: "h:1", id: "x" },
          { remote_addr: "h:1", id: "x" },
        ],
      }),
    ).toThrow(/engine id "x" is used twice/);
  });
});
