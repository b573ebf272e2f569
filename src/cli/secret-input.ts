import { UsageError } from "./args.ts";
import type { CliIo } from "./io.ts";

/**
 * Passwords that stay out of `ps` (README "Terminal"): a `--pass` value is visible to every user
 * of the box in the process list, so a password may also come from the environment
 * (`SVC_PASSWORD`) or from stdin (`--pass-stdin`).
 */
export const PASSWORD_ENV = "SVC_PASSWORD";
/** The coordinator `svc search` talks to when `--host` is not given (README "Terminal"). */
export const HOST_ENV = "SVC_HOST";
/** A token `svc search` sends when neither `--token` nor `--user` is given (README "Terminal"). */
export const TOKEN_ENV = "SVC_TOKEN";

/**
 * `--host` and `--token` from the environment when the command line leaves them out. A `--user`
 * on the command line means a login: an exported SVC_TOKEN never overrides it.
 */
export function clientFlagsFromEnv(flags: Record<string, unknown>, env: CliIo["env"]): void {
  const host = env[HOST_ENV]?.trim();
  if (flags.host === undefined && host) flags.host = host;
  const token = env[TOKEN_ENV]?.trim();
  if (flags.token === undefined && flags.user === undefined && token) flags.token = token;
}

/**
 * The login password of a client command: `--pass`, else `--pass-stdin`, else `SVC_PASSWORD`
 * (only with `--user`, so an exported variable never turns a `--token` call into a login).
 */
export async function passwordFrom(
  given: { pass?: string | undefined; passStdin: boolean; user?: string | undefined },
  io: CliIo,
): Promise<string | undefined> {
  if (given.passStdin) {
    if (given.pass !== undefined) throw new UsageError("--pass and --pass-stdin both given: use one");
    if (!given.user) throw new UsageError("--pass-stdin needs --user");
    return await readSecretFromStdin(io.stdin, io.err);
  }
  if (given.pass !== undefined) return given.pass;
  const env = io.env[PASSWORD_ENV];
  return given.user && env !== undefined && env !== "" ? env : undefined;
}

/** Longest accepted secret; more is a pipe of the wrong thing, not a password. */
const MAX_SECRET_CHARS = 4096;

/**
 * The first line of stdin, without its line end. On a terminal nothing is echoed (raw mode);
 * Ctrl-C or Ctrl-D abort.
 */
export async function readSecretFromStdin(
  stdin: NodeJS.ReadStream,
  prompt?: (text: string) => Promise<void>,
): Promise<string> {
  const line = stdin.isTTY ? await readHidden(stdin, prompt) : await readFirstLine(stdin);
  if (line.length > MAX_SECRET_CHARS)
    throw new UsageError(`--pass-stdin: the first line is longer than ${MAX_SECRET_CHARS} characters`);
  if (line === "") throw new UsageError("--pass-stdin: stdin gave no password (an empty first line)");
  return line;
}

async function readFirstLine(stdin: NodeJS.ReadStream): Promise<string> {
  const dec = new TextDecoder();
  let text = "";
  for await (const chunk of stdin) {
    text += typeof chunk === "string" ? chunk : dec.decode(chunk as Uint8Array, { stream: true });
    if (text.includes("\n") || text.length > MAX_SECRET_CHARS) break;
  }
  return text.split("\n")[0]!.replace(/\r$/, "");
}

async function readHidden(stdin: NodeJS.ReadStream, prompt?: (text: string) => Promise<void>): Promise<string> {
  await prompt?.("password: ");
  stdin.setRawMode(true);
  let value = "";
  try {
    for await (const chunk of stdin) {
      for (const ch of String(chunk)) {
        if (ch === "\r" || ch === "\n") return value;
        if (ch === "\u0003" || ch === "\u0004") throw new UsageError("--pass-stdin: aborted");
        if (ch === "\u007f" || ch === "\b") value = value.slice(0, -1);
        else value += ch;
      }
    }
    return value;
  } finally {
    stdin.setRawMode(false);
    await prompt?.("\n");
  }
}
