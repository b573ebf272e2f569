/**
 * Kamailio (Debian's `kamailio` package) as a child process: config rendered from a template in
 * test/fixtures/kamailio/, everything it writes (pid file, runtime dir, working dir) inside the
 * test's temp dir, in the foreground (-DD) with its log on stderr (-E).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { onPath } from "../harness.ts";
import { spawnPeer, waitTcpListening, waitUdpListening, type PeerProcess } from "./process.ts";

const FIXTURES = join(import.meta.dir, "../fixtures/kamailio");

/**
 * Kamailio with its tls module (Debian ships tls.so in its own package): the module search path is
 * the one `kamailio -h` prints as the -L default.
 */
export const KAMAILIO_TLS = {
  install: "apt-get install kamailio kamailio-tls-modules",
  probe: () => {
    if (!onPath("kamailio")()) return false;
    const help = Bun.spawnSync(["kamailio", "-h"], { stdout: "pipe", stderr: "pipe" });
    const dir = /-L path.*\(default: ([^)]+)\)/.exec(`${help.stdout}${help.stderr}`)?.[1];
    return dir !== undefined && existsSync(join(dir, "tls.so"));
  },
};

/** Replaces every @NAME@ in the template; fails on a placeholder left without a value. */
export function renderKamailioConfig(template: string, values: Record<string, string | number>): string {
  const text = readFileSync(join(FIXTURES, template), "utf8").replace(/@([A-Z_]+)@/g, (m, name: string) =>
    name in values ? String(values[name]) : m,
  );
  const left = /@[A-Z_]+@/.exec(text);
  if (left) throw new Error(`${template}: no value for ${left[0]}`);
  return text;
}

/** The TCP and TLS listener ports of a rendered config, under the #!ifdef/#!ifndef/#!else switches `defines` turn on. */
export function streamListeners(text: string, defines: string[]): number[] {
  const on = new Set(defines);
  const stack: boolean[] = [];
  const ports: number[] = [];
  for (const line of text.split("\n")) {
    const cond = /^#!(ifdef|ifndef)\s+(\w+)/.exec(line);
    const active = stack.every(Boolean);
    if (cond) stack.push(on.has(cond[2]!) === (cond[1] === "ifdef"));
    else if (line.startsWith("#!else")) stack.push(!stack.pop());
    else if (line.startsWith("#!endif")) stack.pop();
    else if (active) {
      const m = /^listen=(?:tcp|tls):127\.0\.0\.1:(\d+)/.exec(line);
      if (m) ports.push(Number(m[1]));
    }
  }
  return ports;
}

/** `defines` become `-A NAME` (the config's #!ifdef switches). */
export async function startKamailio(
  dir: string,
  template: string,
  values: Record<string, string | number> & { SIP_PORT: number },
  defines: string[] = [],
): Promise<PeerProcess> {
  const run = join(dir, "kamailio");
  mkdirSync(run, { recursive: true });
  const cfg = join(run, "kamailio.cfg");
  const text = renderKamailioConfig(template, values);
  writeFileSync(cfg, text);
  // -m/-M: small shared and private memory, enough for ten calls;.
  const k = spawnPeer(
    "kamailio",
    [
      "kamailio",
      "-DD",
      "-E",
      "-f",
      cfg,
      "-P",
      join(run, "kamailio.pid"),
      "-Y",
      run,
      "-w",
      run,
      "-m",
      "32",
      "-M",
      "8",
      ...defines.flatMap((d) => ["-A", d]),
    ],
    { dir },
  );
  try {
    await waitUdpListening(k, values.SIP_PORT);
    // Kamailio's TCP main process opens its TCP and TLS listeners after the UDP ones are up.
    for (const port of streamListeners(text, defines)) await waitTcpListening(k, port);
  } catch (e) {
    await k.stop();
    throw e;
  }
  return k;
}
