import { hostname, userInfo } from "node:os";
import {
  MIN_PASSWORD_LENGTH,
  passwordProblem,
  randomPassword,
  setAdminPassword,
  type FirstRunAdmin,
} from "../auth/index.ts";
import { loadConfig, type Config } from "../config/index.ts";
import { parseListen } from "../core/index.ts";
import { formatHelp, parseArgs, UsageError, type FlagSpec } from "./args.ts";
import type { CliIo } from "./io.ts";
import { readSecretFromStdin } from "./secret-input.ts";

/**
 * The first start and the way back (docs/INSTALL.md "First login"): the banner `svc serve` prints
 * on stderr once when it generated the administrator's password, and `svc reset-admin-password`,
 * which sets a new one when that password is lost.
 */

/** The dashboard URL an operator can open: the bound address, or this host's name when bound to every interface. */
export function dashboardUrl(listenHost: string, boundUrl: string | undefined): string | undefined {
  if (!boundUrl) return undefined;
  const url = new URL(boundUrl);
  if (listenHost === "0.0.0.0" || listenHost === "::") url.hostname = hostname();
  return url.href;
}

/** One listener of the first-run banner: what it serves, its config key and the effective value; `off` says how to turn it on. */
export interface ListenRow {
  what: string;
  key: string;
  listen: string;
  off?: string;
}

/** The environment variable of a config key: SVC_ and the path in capitals, as src/config/load.ts resolves it. */
export const envName = (key: string): string => `SVC_${key.toUpperCase().replace(/\./g, "_")}`;

/**
 * What `svc serve` listens on, from the effective configuration, with the same conditions
 * src/main.ts starts each listener under (docs/INSTALL.md "First login").
 */
export function listenRows(c: Config): ListenRow[] {
  const lake = c.storage.lakehouse.enable;
  const hep = lake && c.ingest.hep.enable;
  const noLake = "off (storage.lakehouse.enable is false)";
  const noHep = lake ? "off (ingest.hep.enable is false)" : noLake;
  const rows: ListenRow[] = [
    {
      what: "dashboard + API",
      key: "coordinator.http_server.listen",
      listen: c.coordinator.http_server.listen,
      ...(c.coordinator.enable ? {} : { off: "off (coordinator.enable is false)" }),
    },
    {
      what: "node API",
      key: "node.http_server.listen",
      listen: c.node.http_server.listen,
      ...(lake ? {} : { off: noLake }),
    },
    {
      what: "HEP UDP",
      key: "ingest.hep.udp.listen",
      listen: c.ingest.hep.udp.listen,
      ...(!hep ? { off: noHep } : c.ingest.hep.udp.enable ? {} : { off: "off (ingest.hep.udp.enable is false)" }),
    },
    {
      what: "HEP TCP",
      key: "ingest.hep.tcp.listen",
      listen: c.ingest.hep.tcp.listen,
      ...(!hep ? { off: noHep } : c.ingest.hep.tcp.enable ? {} : { off: "off (ingest.hep.tcp.enable is false)" }),
    },
    {
      what: "HEP TLS",
      key: "ingest.hep.tls.listen",
      listen: c.ingest.hep.tls.listen,
      ...(!hep
        ? { off: noHep }
        : c.ingest.hep.tls.cert && c.ingest.hep.tls.key
          ? {}
          : { off: "off (set ingest.hep.tls.cert and ingest.hep.tls.key)" }),
    },
    {
      what: "line protocol",
      key: "ingest.line_protocol.listen",
      listen: c.ingest.line_protocol.listen,
      ...(!lake
        ? { off: noLake }
        : c.ingest.line_protocol.enable
          ? {}
          : { off: "off (ingest.line_protocol.enable is false)" }),
    },
  ];
  return rows;
}

/** A listen value as read: ":8080" binds every interface. */
function shownListen(listen: string): string {
  try {
    const { hostname } = parseListen(listen);
    return hostname === "0.0.0.0" || hostname === "::" ? `${listen} (every interface)` : listen;
  } catch {
    return listen;
  }
}

/** The banner's "listening on" block: each address, its key and variable, and how to bind to one interface. */
export function listenBlock(rows: readonly ListenRow[]): string[] {
  const lines = [" Listening on (config key / environment variable):"];
  const shown = rows.map((r) => r.off ?? shownListen(r.listen));
  const width = Math.max(...shown.map((v) => v.length));
  rows.forEach((r, i) =>
    lines.push(`   ${r.what.padEnd(16)} ${shown[i]!.padEnd(width)}  ${r.key} / ${envName(r.key)}`),
  );
  const dash = rows[0]!;
  const port = /:(\d+)$/.exec(dash.listen)?.[1] ?? "8080";
  lines.push(" Bind to one address, e.g. only this host:", `   ${envName(dash.key)}=127.0.0.1:${port}`);
  return lines;
}

/**
 * Plain text for stderr (the journal under systemd); the only place the generated password is
 * shown. `runAs`: the service's user when systemd runs it, so the reset hint keeps the settings
 * database's owner. `listening`: the listeners of the effective configuration (`listenRows`).
 */
export function firstRunBanner(
  admin: FirstRunAdmin,
  opts: {
    url?: string | undefined;
    configPath?: string | undefined;
    runAs?: string | undefined;
    listening?: readonly ListenRow[] | undefined;
  },
): string {
  const configFlag = opts.configPath ? ` --config-path ${opts.configPath}` : "";
  const sudo = opts.runAs ? `sudo -u ${opts.runAs} ` : "";
  const lines = [
    "",
    "==================================================================",
    " svc first start: an administrator account was created",
    "",
    `   URL:       ${opts.url ?? "(the appliance did not start: see the error below)"}`,
    `   user:      ${admin.username}`,
    `   password:  ${admin.password}`,
    "",
    " Sign in: the dashboard asks you to change it. It is shown only",
    " this once. Lost it? Set a new one (it is printed) with:",
    `   ${sudo}svc reset-admin-password${configFlag}`,
    ...(opts.listening ? ["", ...listenBlock(opts.listening)] : []),
    "==================================================================",
    "",
  ];
  return lines.join("\n");
}

/**
 * `svc serve` writes the banner on stderr, outside the log format (docs/INSTALL.md "First login").
 * `url` is the bound coordinator URL, undefined when the start failed. INVOCATION_ID is set by
 * systemd for a service: the reset must then run as the service's user.
 */
export function writeFirstRunBanner(
  admin: FirstRunAdmin,
  config: Config,
  configPath: string | undefined,
  url: string | undefined,
): void {
  const { hostname: listenHost } = parseListen(config.coordinator.http_server.listen, "coordinator.http_server.listen");
  const runAs = process.env.INVOCATION_ID ? userInfo().username : undefined;
  process.stderr.write(
    firstRunBanner(admin, { url: dashboardUrl(listenHost, url), configPath, runAs, listening: listenRows(config) }),
  );
}

const RESET_FLAGS: FlagSpec[] = [
  { name: "config-path", type: "string", description: "JSON configuration file (the one `svc serve` uses)" },
  {
    name: "pass-stdin",
    type: "boolean",
    description: `read the new password from stdin (first line, at least ${MIN_PASSWORD_LENGTH} characters) instead of generating one`,
  },
  { name: "help", alias: "h", type: "boolean", description: "show help" },
];

export const RESET_HELP = formatHelp(
  "svc reset-admin-password [--config-path <file>] [--pass-stdin]",
  [
    "Give the administrator (coordinator.auth.admin_user) a new password in the settings database",
    "(coordinator.settings_db_path), make it an active admin, print it, and exit. Without --pass-stdin",
    "a random password is generated. Under systemd run it as the service user:",
    "  sudo -u svc svc reset-admin-password --config-path /etc/svc/svc.json",
  ].join("\n"),
  RESET_FLAGS,
);

export async function runResetAdminPassword(argv: readonly string[], io: CliIo): Promise<number> {
  const { flags } = parseArgs(argv, RESET_FLAGS);
  if (flags.help) {
    await io.out(`${RESET_HELP}\n`);
    return 0;
  }
  const { config } = loadConfig({ path: flags["config-path"] as string | undefined });
  const typed = flags["pass-stdin"] === true;
  const password = typed ? await readSecretFromStdin(io.stdin) : randomPassword();
  // The users API's rule, in characters (docs/AUTH.md "Password rules").
  const problem = typed ? passwordProblem(password) : undefined;
  if (problem) throw new UsageError(`--pass-stdin: ${problem.replace(/^password: /, "the password must have ")}`);
  const r = await setAdminPassword(config.coordinator, password);
  const what = r.created ? "set (user created)" : "reset";
  await io.out(
    typed
      ? `password of administrator "${r.username}" ${what} in ${config.coordinator.settings_db_path}\n`
      : `password of administrator "${r.username}" ${what} in ${config.coordinator.settings_db_path}\n  user:      ${r.username}\n  password:  ${password}\n`,
  );
  return 0;
}
