/**
 * sipp XML scenario files (`-sf`, docs/LOADGEN.md "Scenario files"): the common commands `send`,
 * `recv` (response or request, `optional`, `next`, `timeout`/`ontimeout`), `pause`, `nop` (with
 * `next` it is a jump), `label` and `timewait`. Elements and attributes outside that set are refused
 * with their name, never skipped silently; the statistics elements (`ResponseTimeRepartition`,
 * `CallLengthRepartition`) and `Reference` carry no behaviour and are ignored. Actions and the step
 * attributes that read variables are parsed by scenario-actions.ts.
 */
import { readFileSync } from "node:fs";
import { LoadgenUsageError } from "./options.ts";
import { checkVariables, parseStepExtras, STEP_ATTRS, type StepExtras } from "./scenario-actions.ts";
import { checkKeywords } from "./scenario-template.ts";

export type ScenarioCommand = (
  | { kind: "send"; template: string; retrans?: number; next?: string }
  | {
      kind: "recv";
      response?: number;
      request?: string;
      optional: boolean;
      next?: string;
      timeout?: number;
      ontimeout?: string;
    }
  | { kind: "pause"; ms?: number }
  | { kind: "nop"; next?: string }
  | { kind: "label"; id: string }
  | { kind: "timewait"; ms?: number }
) & { step?: StepExtras };

export interface Scenario {
  name: string;
  commands: ScenarioCommand[];
  /** Label id → command index. */
  labels: Map<string, number>;
  /** A client scenario starts with a send; a server scenario with a recv of a request. */
  client: boolean;
}

interface XmlNode {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  text: string;
}

const IGNORED = new Set(["ResponseTimeRepartition", "CallLengthRepartition", "Reference"]);
const ATTRS: Record<string, string[]> = {
  send: ["retrans", "next", "crlf", "start_rtd", "rtd", "repeat_rtd", ...STEP_ATTRS],
  recv: [
    "response",
    "request",
    "optional",
    "next",
    "timeout",
    "ontimeout",
    "crlf",
    "rtd",
    "start_rtd",
    "repeat_rtd",
    "rrs",
    ...STEP_ATTRS,
  ],
  pause: ["milliseconds", "crlf", "condexec", "condexec_inverse", "counter"],
  nop: ["next", "crlf", "start_rtd", "rtd", "repeat_rtd", ...STEP_ATTRS],
  label: ["id"],
  timewait: ["milliseconds"],
};

const decodeEntities = (s: string) =>
  s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, "&");

/** A small XML reader for scenario files: elements, attributes, text and CDATA; comments and declarations dropped. */
export function parseXml(text: string, path: string): XmlNode {
  const src = text
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/<\?[\s\S]*?\?>/g, "")
    .replace(/<!DOCTYPE[^>]*>/gi, "");
  const root: XmlNode = { name: "#root", attrs: {}, children: [], text: "" };
  const stack = [root];
  const re =
    /<!\[CDATA\[([\s\S]*?)\]\]>|<(\/?)([A-Za-z_][\w.-]*)((?:\s+[\w:.-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|([^<]+)|(<)/g;
  for (let m = re.exec(src); m; m = re.exec(src)) {
    const top = stack[stack.length - 1]!;
    if (m[1] !== undefined) top.text += m[1];
    else if (m[6] !== undefined) top.text += decodeEntities(m[6]);
    else if (m[7] !== undefined)
      throw new LoadgenUsageError(`${path}: malformed XML near "${src.slice(m.index, m.index + 30)}"`);
    else if (m[2] === "/") {
      if (top.name !== m[3]) throw new LoadgenUsageError(`${path}: </${m[3]}> closes <${top.name}>`);
      stack.pop();
    } else {
      const attrs: Record<string, string> = {};
      for (const a of (m[4] ?? "").matchAll(/([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g))
        attrs[a[1]!] = decodeEntities(a[2] ?? a[3] ?? "");
      const node: XmlNode = { name: m[3]!, attrs, children: [], text: "" };
      top.children.push(node);
      if (m[5] !== "/") stack.push(node);
    }
  }
  if (stack.length !== 1) throw new LoadgenUsageError(`${path}: <${stack[stack.length - 1]!.name}> is never closed`);
  return root;
}

function int(path: string, el: string, attr: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new LoadgenUsageError(`${path}: <${el} ${attr}="${v}"> needs a whole number`);
  return Number(v);
}

export function parseScenario(text: string, path: string): Scenario {
  const root = parseXml(text, path);
  const scenario = root.children.find((c) => c.name === "scenario");
  if (!scenario) throw new LoadgenUsageError(`${path}: no <scenario> element`);
  const commands: ScenarioCommand[] = [];
  const labels = new Map<string, number>();
  for (const el of scenario.children) {
    if (el.name === "Reference")
      for (const a of Object.keys(el.attrs))
        if (a !== "variables") throw new LoadgenUsageError(`${path}: attribute ${a} of <Reference> is not built yet`);
    if (IGNORED.has(el.name)) continue;
    const allowed = ATTRS[el.name];
    if (!allowed)
      throw new LoadgenUsageError(
        `${path}: <${el.name}> is not built yet (send, recv, pause, nop, label, timewait; docs/LOADGEN.md)`,
      );
    for (const a of Object.keys(el.attrs))
      if (!allowed.includes(a)) throw new LoadgenUsageError(`${path}: attribute ${a} of <${el.name}> is not built yet`);
    const hasSteps = el.name === "send" || el.name === "recv" || el.name === "nop" || el.name === "pause";
    if (!hasSteps && el.children.length > 0)
      throw new LoadgenUsageError(`${path}: <${el.children[0]!.name}> inside <${el.name}> is not built yet`);
    const extras = hasSteps ? parseStepExtras(el, path) : {};
    const at = commands.length;
    const a = el.attrs;
    switch (el.name) {
      case "send": {
        if (!el.text.trim()) throw new LoadgenUsageError(`${path}: an empty <send>`);
        commands.push({
          kind: "send",
          template: el.text,
          retrans: int(path, "send", "retrans", a.retrans),
          next: a.next,
        });
        break;
      }
      case "recv": {
        if ((a.response === undefined) === (a.request === undefined))
          throw new LoadgenUsageError(`${path}: <recv> needs exactly one of response or request`);
        commands.push({
          kind: "recv",
          response: int(path, "recv", "response", a.response),
          request: a.request?.toUpperCase(),
          optional: a.optional === "true" || a.optional === "global",
          next: a.next,
          timeout: int(path, "recv", "timeout", a.timeout),
          ontimeout: a.ontimeout,
        });
        break;
      }
      case "pause":
        commands.push({ kind: "pause", ms: int(path, "pause", "milliseconds", a.milliseconds) });
        break;
      case "nop":
        commands.push({ kind: "nop", next: a.next });
        break;
      case "label": {
        if (!a.id) throw new LoadgenUsageError(`${path}: <label> needs an id`);
        if (labels.has(a.id)) throw new LoadgenUsageError(`${path}: label "${a.id}" is defined twice`);
        labels.set(a.id, commands.length);
        commands.push({ kind: "label", id: a.id });
        break;
      }
      case "timewait":
        commands.push({ kind: "timewait", ms: int(path, "timewait", "milliseconds", a.milliseconds) });
        break;
    }
    if (Object.keys(extras).length > 0) commands[at]!.step = extras;
  }
  checkVariables(
    commands.map((c) => c.step ?? {}),
    commands.flatMap((c) => (c.kind === "send" ? [c.template] : [])),
    path,
  );
  for (const c of commands) {
    for (const target of [(c as { next?: string }).next, (c as { ontimeout?: string }).ontimeout]) {
      if (target !== undefined && !labels.has(target))
        throw new LoadgenUsageError(`${path}: jump to unknown label "${target}"`);
    }
  }
  const first = commands.find((c) => c.kind === "send" || c.kind === "recv");
  if (!first) throw new LoadgenUsageError(`${path}: the scenario neither sends nor receives`);
  if (first.kind === "recv" && first.request === undefined)
    throw new LoadgenUsageError(`${path}: a server scenario must start with <recv request=…>`);
  return { name: scenario.attrs.name ?? path, commands, labels, client: first.kind === "send" };
}

/** Reads and checks a scenario file: the XML, and every keyword of its templates. */
export function loadScenario(path: string): Scenario {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new LoadgenUsageError(
      `cannot read scenario ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  const s = parseScenario(text, path);
  for (const c of s.commands) {
    if (c.kind === "send") checkKeywords(c.template, path);
    for (const a of c.step?.actions ?? []) if ("template" in a) checkKeywords(a.template, path);
  }
  return s;
}
