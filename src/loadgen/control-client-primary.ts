/**
 * Primary-engine commands of `loadgen shell` (docs/LOADGEN.md "tui and shell"): `listeners`,
 * `listener <index> on|off`, `transport <udp|tcp|tls> on|off`, `scenario <name>`.
 */
import { call, type ClientFlags } from "./control-client-http.ts";

export const PRIMARY_COMMANDS = ["listeners", "listener", "transport", "scenario"];

interface Listener {
  index: number;
  transport: string;
  ip: string;
  port: number;
  enabled: boolean;
}

const onOff = (cmd: string, v: string | undefined): boolean => {
  if (v !== "on" && v !== "off") throw new Error(`${cmd} needs on or off as its last word`);
  return v === "on";
};

export async function runPrimaryCommand(
  f: ClientFlags,
  cmd: string,
  args: string[],
  out: (line: string) => void,
): Promise<void> {
  let answer: unknown;
  if (cmd === "listeners") {
    const { id, listeners } = (await call(f, "/api/v1/listeners")) as { id: string; listeners: Listener[] };
    for (const l of listeners) out(`${id} ${l.index} ${l.transport} ${l.ip}:${l.port} ${l.enabled ? "on" : "off"}`);
    return;
  }
  if (cmd === "listener") {
    if (args.length !== 2 || !/^\d+$/.test(args[0]!)) throw new Error("listener <index> on|off");
    answer = await call(f, "/api/v1/control", {
      listeners: [{ index: Number(args[0]), enabled: onOff(cmd, args[1]) }],
    });
  } else if (cmd === "transport") {
    if (args.length !== 2) throw new Error("transport <udp|tcp|tls> on|off");
    answer = await call(f, "/api/v1/control", { transports: { [args[0]!]: onOff(cmd, args[1]) } });
  } else {
    if (args.length !== 1) throw new Error("scenario <uac|uas|register|options>");
    answer = await call(f, "/api/v1/control", { scenario: args[0] });
  }
  out(JSON.stringify(answer));
}
