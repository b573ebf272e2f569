/**
 * `loadgen profile keys` and `loadgen profile init` (docs/LOADGEN.md "profile subcommand"): the key
 * table is built from PROFILE_KEYS and the flag table FLAGS, so it lists what a run accepts; the
 * examples are files `loadgen profile check` accepts (src/loadgen/profile-cmd.test.ts).
 */
import { FLAGS } from "./options.ts";
import { NOT_BUILT, PROFILE_KEYS } from "./profile-keys.ts";

export const PROFILE_FORMS = ["alias", "flat", "composite"] as const;
export type ProfileForm = (typeof PROFILE_FORMS)[number];

/** How each key type reads in the table (a new key type fails to compile until it is named here). */
const TYPE_NAMES: Record<(typeof PROFILE_KEYS)[string], string> = {
  string: "string",
  int: "int",
  number: "number",
  bool: "bool",
  listeners: "object[]",
  auth: "object",
  strings: "string[]",
  server: "bool",
};

/** Keys without a flag of their own, and what they do instead. */
const NO_FLAG: Record<string, string> = {
  id: "engine name",
  role: "flat files: management|server or load|client|uac",
  listeners: "management: binds {transport, local_ip, local_port, tls_cert, tls_key}",
  auth: "control-API users {type, sqlite_path, jwt_secret}",
  server: "aliases: true = management mode, false = load",
  extra_args: "more flags, as on the command line",
};

/** One row per profile key: key, type, the flag(s) it maps to or what it does, and "not built yet". */
export function keysTable(): string[] {
  const rows = Object.entries(PROFILE_KEYS).map(([key, type]) => {
    const flags = Object.entries(FLAGS)
      .filter(([, def]) => def.key === key)
      .map(([flag]) => `-${flag}`);
    const note = [flags.join(" ") || NO_FLAG[key] || "—", NOT_BUILT[key] ? `(not built yet: ${NOT_BUILT[key]})` : ""]
      .filter(Boolean)
      .join(" ");
    return [key, TYPE_NAMES[type], note];
  });
  const table = [["KEY", "TYPE", "FLAG OR MEANING"], ...rows];
  const width = [0, 1].map((c) => Math.max(...table.map((r) => r[c]!.length)));
  return table.map((r) => `${r[0]!.padEnd(width[0]!)}  ${r[1]!.padEnd(width[1]!)}  ${r[2]}`);
}

/** A management UAS, a call load, a registration and an OPTIONS ping, each run with -run-alias. */
const ALIAS_EXAMPLE = {
  aliases: {
    uas: {
      server: true,
      scenario_name: "uas",
      local_ip: "127.0.0.1",
      local_port: 5060,
      api_addr: "127.0.0.1:8080",
      stat_period: "10s",
    },
    calls: {
      scenario_name: "uac",
      remote_addr: "127.0.0.1:5060",
      rate: 10,
      max_concurrent: 100,
      total_calls: 1000,
      stat_period: "10s",
      hep_addr: "127.0.0.1:9060",
      hep_capture_id: 2001,
      extra_args: ["-d", "1000"],
    },
    register: {
      scenario_name: "register",
      remote_addr: "127.0.0.1:5060",
      auth_username: "1000",
      auth_password: "change-me",
      rate: 5,
      total_calls: 100,
    },
    options: { scenario_name: "options", remote_addr: "127.0.0.1:5060", rate: 1 },
  },
};

/** `loadgen server -config <file>`: a UAS on UDP and TCP with the control API. */
const FLAT_EXAMPLE = {
  id: "server",
  scenario_name: "uas",
  listeners: [
    { transport: "u1", local_ip: "127.0.0.1", local_port: 5060 },
    { transport: "t1", local_ip: "127.0.0.1", local_port: 5060 },
  ],
  api_addr: "127.0.0.1:8080",
  stat_period: "10s",
  hep_addr: "127.0.0.1:9060",
};

/** `loadgen server -config <file>`: the same server plus two clients calling it, one over UDP, one over TCP. */
const COMPOSITE_EXAMPLE = {
  stat_period: "10s",
  hep_addr: "127.0.0.1:9060",
  server: {
    id: "server",
    scenario_name: "uas",
    listeners: [
      { transport: "u1", local_ip: "127.0.0.1", local_port: 5060 },
      { transport: "t1", local_ip: "127.0.0.1", local_port: 5060 },
    ],
    api_addr: "127.0.0.1:8080",
  },
  clients: [
    {
      id: "calls-udp",
      remote_addr: "127.0.0.1:5060",
      rate: 10,
      max_concurrent: 100,
      total_calls: 1000,
      extra_args: ["-d", "1000"],
    },
    { id: "calls-tcp", transport: "t1", remote_addr: "127.0.0.1:5060", rate: 5, total_calls: 500 },
  ],
};

const EXAMPLES: Record<ProfileForm, object> = {
  alias: ALIAS_EXAMPLE,
  flat: FLAT_EXAMPLE,
  composite: COMPOSITE_EXAMPLE,
};

/** A fresh copy of the example of that form. */
export function exampleProfile(form: ProfileForm): Record<string, unknown> {
  return structuredClone(EXAMPLES[form]) as Record<string, unknown>;
}
