import { hostname, userInfo } from "node:os";
import { MIN_PASSWORD_LENGTH, passwordProblem, randomPassword, setAdminPassword, type FirstRunAdmin } from "../auth/index.ts";
import { loadConfig } from "../config/index.ts";
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

/**
 * Plain text for stderr (the journal under systemd); the only place the generated password is
 * shown. `runAs`: the service's user when systemd runs it, so the reset hint keeps the settings
 * database's owner.
 */
export function firstRunBanner(admin: FirstRunAdmin, opts: { url?: string | undefined; configPath?: string | undefined; runAs?: string | undefined }): string {
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
    " Sign in and change it (Users, admin, New password): it is shown only",
    " this once. Lost it? Set a new one (it is printed) with:",
    `   ${sudo}svc reset-admin-password${configFlag}`,
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
export function writeFirstRunBanner(admin: FirstRunAdmin, listen: string, configPath: string | undefined, url: string | undefined): void {
  const { hostname: listenHost } = parseListen(listen, "coordinator.http_server.listen");
  const runAs = process.env.INVOCATION_ID ? userInfo().username : undefined;
  process.stderr.write(firstRunBanner(admin, { url: dashboardUrl(listenHost, url), configPath, runAs }));
}

const RESET_FLAGS: FlagSpec[] = [
  { name: "config-path", type: "string", description: "JSON configuration file (the one `svc serve` uses)" },
  { name: "pass-stdin", type: "boolean", description: `read the new password from stdin (first line, at least ${MIN_PASSWORD_LENGTH} characters) instead of generating one` },
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
