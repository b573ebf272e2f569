/**
 * sipp message templates (docs/LOADGEN.md "Scenario files"): lines trimmed, the first empty line
 * separates headers from body, CRLF line ends, `[keywords]` replaced, `[len]` = body bytes.
 */
import { LoadgenUsageError } from "./options.ts";
import type { SipWireMessage } from "./sip-wire.ts";

/** The per-message values a template can use. */
export interface TemplateContext {
  values: Record<string, string>;
  /** The last message received in the call ([last_Header:] / [last_Header]). */
  last: SipWireMessage | undefined;
  /** Injection row ([fieldN]). */
  fields: readonly string[];
  /** `[authentication …]` → the Authorization value for the message being built. */
  authentication(method: string, uri: string, username?: string, password?: string): string;
  /** Call variables (`[$name]`, docs/LOADGEN.md "Scenario actions and variables"); unset ones render empty. */
  vars?: { text(name: string): string };
}

const SIMPLE = new Set([
  "service",
  "remote_ip",
  "remote_port",
  "local_ip",
  "local_port",
  "transport",
  "call_number",
  "call_id",
  "cseq",
  "branch",
  "pid",
  "media_ip",
  "media_port",
  "media_ip_type",
  "local_ip_type",
  "server_ip",
  "peer_tag_param",
  "next_url",
  "routes",
  "len",
]);

/** Every keyword of a template must be one this build fills in; the error names the first unknown one. */
export function checkKeywords(template: string, path: string): void {
  for (const m of template.matchAll(/\[([^\]\r\n]+)\]/g)) {
    const k = m[1]!;
    if (
      SIMPLE.has(k) ||
      /^last_[\w-]+:?$/i.test(k) ||
      /^field\d+$/.test(k) ||
      /^\$[^\]\s]+$/.test(k) ||
      /^authentication(\s+\w+=\S+)*$/.test(k)
    )
      continue;
    throw new LoadgenUsageError(`${path}: keyword [${k}] is not built yet (docs/LOADGEN.md "Scenario files")`);
  }
}

const FIRST_LINE = /^(\S+) (\S+) SIP\/2\.0$/;

export function renderTemplate(template: string, ctx: TemplateContext): string {
  const lines = template.split(/\r?\n/).map((l) => l.trim());
  while (lines.length > 0 && lines[0] === "") lines.shift();
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const blank = lines.indexOf("");
  const headLines = blank < 0 ? lines : lines.slice(0, blank);
  const bodyLines = blank < 0 ? [] : lines.slice(blank + 1);
  const sub = (line: string) =>
    line.replace(/\[([^\]\r\n]+)\]/g, (whole, k: string) => keyword(k, ctx, headLines[0] ?? "") ?? whole);
  const body = bodyLines.map(sub).join("\r\n") + (bodyLines.length > 0 ? "\r\n" : "");
  const head = headLines
    .map(sub)
    .flatMap((l) => l.split("\r\n"))
    .filter((l) => l !== "")
    .map((l) => l.replace(/\[len\]/g, String(Buffer.byteLength(body))));
  return `${head.join("\r\n")}\r\n\r\n${body}`;
}

/** One line with its keywords and `[$var]` replaced (action templates: `assignstr`, `log`). */
export function renderLine(line: string, ctx: TemplateContext): string {
  return line.replace(/\[([^\]\r\n]+)\]/g, (whole, k: string) => keyword(k, ctx, "") ?? whole);
}

function keyword(k: string, ctx: TemplateContext, firstLine: string): string | undefined {
  if (k === "len") return "[len]"; // filled once the body is known
  if (k[0] === "$") return ctx.vars?.text(k.slice(1)) ?? "";
  if (k in ctx.values) return ctx.values[k];
  const field = /^field(\d+)$/.exec(k);
  if (field) return ctx.fields[Number(field[1])] ?? "";
  const last = /^last_([\w-]+)(:?)$/i.exec(k);
  if (last) {
    const name = last[1]!;
    const values = ctx.last?.headers.get(name.toLowerCase()) ?? [];
    if (values.length === 0) return "";
    // [last_Via:] is every Via line of the last message with its name; [last_Via] only the first value.
    return last[2] ? values.map((v) => `${name}: ${v}`).join("\r\n") : values[0]!;
  }
  const auth = /^authentication((?:\s+\w+=\S+)*)$/.exec(k);
  if (auth) {
    const params = Object.fromEntries([...auth[1]!.matchAll(/(\w+)=(\S+)/g)].map((p) => [p[1]!, p[2]!]));
    const m = FIRST_LINE.exec(firstLine.replace(/\[([^\]]+)\]/g, (w, kk: string) => ctx.values[kk] ?? w));
    return ctx.authentication(m?.[1] ?? "", m?.[2] ?? "", params.username, params.password);
  }
  return undefined;
}
