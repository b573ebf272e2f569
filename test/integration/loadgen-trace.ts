/** Reading loadgen's `trace_msg` log (docs/LOADGEN.md "Statistics": sipp's layout) in tests. */
import { readFileSync } from "node:fs";

/** The messages of a `trace_msg` log: direction and text. */
export function traced(path: string): Array<{ sent: boolean; text: string }> {
  return readFileSync(path, "utf8")
    .split(/^-{20,} .*$/m)
    .map((b) => /^\n(UDP|TCP) message (sent to|received from) [^\n]*:\n\n([\s\S]*)$/.exec(b))
    .filter((m) => m !== null)
    .map((m) => ({ sent: m[2] === "sent to", text: m[3]! }));
}

export const firstLine = (text: string) => text.split("\r\n")[0]!;
export const headerOf = (text: string, name: string) => new RegExp(`^${name}: *(.*?)\r?$`, "im").exec(text)?.[1] ?? "";
