/**
 * sipp scenario actions and the step attributes that read variables (docs/LOADGEN.md "Scenario
 * actions and variables"): the `<action>` block of `send`, `recv` and `nop`, and `test`, `chance`,
 * `condexec`, `condexec_inverse`, `rrs`, `counter` on a step. Parsed and checked at load time; an
 * action or attribute outside the documented set is refused with its name, never skipped. The
 * evaluation lives in scenario-action-run.ts.
 */
import { LoadgenUsageError } from "./options.ts";
import { templateVars } from "./scenario-vars.ts";

/** The XML element shape scenario-xml.ts reads (structural, so this file does not import it). */
export interface ElementNode {
  name: string;
  attrs: Record<string, string>;
  children: ElementNode[];
}

export type Compare = "equal" | "not_equal" | "greater_than" | "less_than" | "greater_than_equal" | "less_than_equal";
export type SearchIn = "msg" | "hdr" | "body" | "var";
/** A number operand: a literal, or another variable read as a number. */
export type Operand = { value: number } | { variable: string };

export type Action =
  | {
      kind: "ereg";
      source: string;
      regexp: RegExp;
      searchIn: SearchIn;
      /** Lower-case header name for `hdr`; the variable for `var`. */
      header?: string;
      variable?: string;
      /** 1-based occurrence of the header; undefined = every value joined with ", ". */
      occurrence?: number;
      checkIt: boolean;
      checkItInverse: boolean;
      assignTo: string[];
    }
  | { kind: "assign"; to: string; from: Operand }
  | { kind: "assignstr"; to: string; template: string }
  | { kind: "add" | "subtract" | "multiply" | "divide"; to: string; from: Operand }
  | { kind: "test"; to: string; variable: string; compare: Compare; against: Operand }
  | { kind: "strcmp"; to: string; variable: string; against: { value: string } | { variable: string } }
  | { kind: "todouble"; to: string; variable: string }
  | { kind: "trim"; to: string }
  | { kind: "gettimeofday"; to: string[] }
  | { kind: "log" | "warning" | "error"; template: string }
  | { kind: "jump"; to: Operand }
  | { kind: "exec"; cmd: "stop_call" | "stop_now" | "stop_gracefully" };

/** What a step carries besides its own command. */
export interface StepExtras {
  actions?: Action[];
  /** `test="var"`: the step's `next` is taken only when the variable is true. */
  test?: string;
  /** `chance="0.x"`: the probability that the `next` jump is taken. */
  chance?: number;
  /** `condexec="var"`: the step runs only when the variable is true (`condexec_inverse`: false). */
  condexec?: string;
  condexecInverse?: boolean;
  /** `rrs="true"` on a recv: its Record-Route set becomes the route set of `[routes]`. */
  rrs?: boolean;
  counter?: string;
  /** Response-time markers: `start_rtd` starts the named timer, `rtd` stops it (`true` names timer 1). */
  startRtd?: string;
  rtd?: string;
  repeatRtd?: boolean;
}

/** Attributes every step may carry on top of its own (the message commands' common ones in sipp). */
export const STEP_ATTRS = ["test", "chance", "condexec", "condexec_inverse", "counter"];

const COMPARES = new Set<string>([
  "equal",
  "not_equal",
  "greater_than",
  "less_than",
  "greater_than_equal",
  "less_than_equal",
]);
const ACTION_ATTRS: Record<string, string[]> = {
  ereg: [
    "regexp",
    "search_in",
    "header",
    "variable",
    "case_indep",
    "occurrence",
    "start_line",
    "check_it",
    "check_it_inverse",
    "assign_to",
  ],
  assign: ["assign_to", "value", "variable"],
  assignstr: ["assign_to", "value"],
  add: ["assign_to", "value", "variable"],
  subtract: ["assign_to", "value", "variable"],
  multiply: ["assign_to", "value", "variable"],
  divide: ["assign_to", "value", "variable"],
  test: ["assign_to", "variable", "compare", "value", "variable2"],
  strcmp: ["assign_to", "variable", "value", "variable2"],
  todouble: ["assign_to", "variable"],
  trim: ["assign_to"],
  gettimeofday: ["assign_to"],
  log: ["message"],
  warning: ["message"],
  error: ["message"],
  jump: ["value", "variable"],
  exec: ["int_cmd"],
};

/** POSIX bracket classes (sipp compiles POSIX extended regexps) → their JavaScript ranges. */
const POSIX_CLASSES: Record<string, string> = {
  alnum: "A-Za-z0-9",
  alpha: "A-Za-z",
  digit: "0-9",
  xdigit: "0-9A-Fa-f",
  lower: "a-z",
  upper: "A-Z",
  space: "\\s",
  blank: " \\t",
  punct: "!-\\/:-@\\[-`{-~",
  word: "\\w",
};

/** A POSIX extended regexp as a JavaScript one: bracket classes translated; `.` matches newlines as in POSIX. */
export function posixRegExp(source: string, where: string): RegExp {
  const js = source.replace(/\[:(\w+):\]/g, (whole, name: string) => {
    const r = POSIX_CLASSES[name];
    if (!r) throw new LoadgenUsageError(`${where}: POSIX class ${whole} is not built yet`);
    return r;
  });
  try {
    return new RegExp(js, "s");
  } catch (e) {
    throw new LoadgenUsageError(`${where}: bad regexp "${source}": ${(e as Error).message}`);
  }
}

const bool = (v: string | undefined) => v === "true";

function need(el: ElementNode, attr: string, where: string): string {
  const v = el.attrs[attr];
  if (v === undefined || v === "") throw new LoadgenUsageError(`${where}: <${el.name}> needs ${attr}`);
  return v;
}

function num(v: string, el: string, attr: string, where: string): number {
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n))
    throw new LoadgenUsageError(`${where}: <${el} ${attr}="${v}"> needs a number`);
  return n;
}

function operand(el: ElementNode, where: string, valueAttr = "value", varAttr = "variable"): Operand {
  const v = el.attrs[valueAttr];
  const name = el.attrs[varAttr];
  if ((v === undefined) === (name === undefined))
    throw new LoadgenUsageError(`${where}: <${el.name}> needs exactly one of ${valueAttr} or ${varAttr}`);
  return v !== undefined ? { value: num(v, el.name, valueAttr, where) } : { variable: name! };
}

function parseAction(el: ElementNode, where: string): Action {
  if (el.name === "exec" && el.attrs.command !== undefined)
    throw new LoadgenUsageError(
      `${where}: <exec command="…"> is refused: loadgen runs no shell commands from a scenario (a profile must not execute programs); use int_cmd`,
    );
  const allowed = ACTION_ATTRS[el.name];
  if (!allowed)
    throw new LoadgenUsageError(
      `${where}: action <${el.name}> is not built yet (docs/LOADGEN.md "Scenario actions and variables")`,
    );
  for (const a of Object.keys(el.attrs))
    if (!allowed.includes(a)) throw new LoadgenUsageError(`${where}: attribute ${a} of <${el.name}> is not built yet`);
  if (el.children.length > 0)
    throw new LoadgenUsageError(`${where}: <${el.children[0]!.name}> inside <${el.name}> is not built yet`);
  const a = el.attrs;
  switch (el.name) {
    case "ereg": {
      const source = need(el, "regexp", where);
      const regexp = posixRegExp(source, where);
      const searchIn = (a.search_in ?? "msg") as SearchIn;
      if (!["msg", "hdr", "body", "var"].includes(searchIn))
        throw new LoadgenUsageError(`${where}: <ereg search_in="${searchIn}"> must be msg, hdr, body or var`);
      const assignTo = need(el, "assign_to", where)
        .split(",")
        .map((s) => s.trim());
      // Groups: exec on an always-matching alternative counts them.
      const groups = new RegExp(`${regexp.source}|`).exec("")!.length - 1;
      if (assignTo.length > groups + 1)
        throw new LoadgenUsageError(
          `${where}: <ereg assign_to="${a.assign_to}"> names ${assignTo.length} variables but "${source}" has ${groups} group(s)`,
        );
      const occurrence = a.occurrence === undefined ? undefined : num(a.occurrence, "ereg", "occurrence", where);
      return {
        kind: "ereg",
        source,
        regexp,
        searchIn,
        header:
          searchIn === "hdr" ? need(el, "header", where).trim().replace(/:$/, "").trim().toLowerCase() : undefined,
        variable: searchIn === "var" ? need(el, "variable", where) : undefined,
        occurrence,
        checkIt: bool(a.check_it),
        checkItInverse: bool(a.check_it_inverse),
        assignTo,
      };
    }
    case "assign":
    case "add":
    case "subtract":
    case "multiply":
    case "divide":
      return { kind: el.name, to: need(el, "assign_to", where), from: operand(el, where) };
    case "assignstr":
      return { kind: "assignstr", to: need(el, "assign_to", where), template: a.value ?? "" };
    case "test": {
      const compare = need(el, "compare", where);
      if (!COMPARES.has(compare))
        throw new LoadgenUsageError(`${where}: <test compare="${compare}"> must be one of ${[...COMPARES].join(", ")}`);
      return {
        kind: "test",
        to: need(el, "assign_to", where),
        variable: need(el, "variable", where),
        compare: compare as Compare,
        against: operand(el, where, "value", "variable2"),
      };
    }
    case "strcmp": {
      if ((a.value === undefined) === (a.variable2 === undefined))
        throw new LoadgenUsageError(`${where}: <strcmp> needs exactly one of value or variable2`);
      return {
        kind: "strcmp",
        to: need(el, "assign_to", where),
        variable: need(el, "variable", where),
        against: a.value !== undefined ? { value: a.value } : { variable: a.variable2! },
      };
    }
    case "todouble":
      return { kind: "todouble", to: need(el, "assign_to", where), variable: need(el, "variable", where) };
    case "trim":
      return { kind: "trim", to: need(el, "assign_to", where) };
    case "gettimeofday":
      return {
        kind: "gettimeofday",
        to: need(el, "assign_to", where)
          .split(",")
          .map((s) => s.trim()),
      };
    case "log":
    case "warning":
    case "error":
      return { kind: el.name, template: need(el, "message", where) };
    case "jump":
      return { kind: "jump", to: operand(el, where) };
    default: {
      const cmd = need(el, "int_cmd", where);
      if (cmd !== "stop_call" && cmd !== "stop_now" && cmd !== "stop_gracefully")
        throw new LoadgenUsageError(`${where}: <exec int_cmd="${cmd}"> must be stop_call, stop_now or stop_gracefully`);
      return { kind: "exec", cmd };
    }
  }
}

/** The step attributes and `<action>` child of a send, recv, nop or pause element. */
export function parseStepExtras(el: ElementNode, path: string): StepExtras {
  const where = `${path}: <${el.name}>`;
  const out: StepExtras = {};
  for (const child of el.children) {
    if (child.name !== "action" || el.name === "pause")
      throw new LoadgenUsageError(`${path}: <${child.name}> inside <${el.name}> is not built yet`);
    if (out.actions) throw new LoadgenUsageError(`${where} has more than one <action>`);
    if (Object.keys(child.attrs).length > 0)
      throw new LoadgenUsageError(`${path}: attribute ${Object.keys(child.attrs)[0]} of <action> is not built yet`);
    out.actions = child.children.map((c) => parseAction(c, path));
  }
  const a = el.attrs;
  if (a.test !== undefined) out.test = a.test;
  if (a.chance !== undefined) {
    const c = num(a.chance, el.name, "chance", path);
    if (c < 0 || c > 1)
      throw new LoadgenUsageError(`${path}: <${el.name} chance="${a.chance}"> must be between 0 and 1`);
    out.chance = c;
  }
  if (a.condexec !== undefined) out.condexec = a.condexec;
  if (a.condexec_inverse !== undefined) {
    if (a.condexec === undefined) throw new LoadgenUsageError(`${where}: condexec_inverse without condexec`);
    out.condexecInverse = bool(a.condexec_inverse);
  }
  if (a.rrs !== undefined) out.rrs = bool(a.rrs);
  if (a.counter !== undefined) out.counter = a.counter;
  const rtdName = (v: string | undefined) => (v === undefined || v === "false" ? undefined : v === "true" ? "1" : v);
  if (rtdName(a.start_rtd)) out.startRtd = rtdName(a.start_rtd);
  if (rtdName(a.rtd)) out.rtd = rtdName(a.rtd);
  if (a.repeat_rtd === "true") out.repeatRtd = true;
  return out;
}

/** Variables an action writes, and those it reads (templates included). */
function varsOf(action: Action): { writes: string[]; reads: string[] } {
  switch (action.kind) {
    case "ereg":
      return { writes: action.assignTo, reads: action.variable ? [action.variable] : [] };
    case "assign":
    case "add":
    case "subtract":
    case "multiply":
    case "divide":
      return { writes: [action.to], reads: "variable" in action.from ? [action.from.variable] : [] };
    case "assignstr":
      return { writes: [action.to], reads: templateVars(action.template) };
    case "test":
      return {
        writes: [action.to],
        reads: [action.variable, ...("variable" in action.against ? [action.against.variable] : [])],
      };
    case "strcmp":
      return {
        writes: [action.to],
        reads: [action.variable, ...("variable" in action.against ? [action.against.variable] : [])],
      };
    case "todouble":
      return { writes: [action.to], reads: [action.variable] };
    case "trim":
      return { writes: [action.to], reads: [action.to] };
    case "gettimeofday":
      return { writes: action.to, reads: [] };
    case "log":
    case "warning":
    case "error":
      return { writes: [], reads: templateVars(action.template) };
    case "jump":
      return { writes: [], reads: "variable" in action.to ? [action.to.variable] : [] };
    case "exec":
      return { writes: [], reads: [] };
  }
}

/**
 * sipp refuses a scenario that reads a variable no action ever assigns ("Variable $x is referenced
 * … times"); so does loadgen, naming it. `templates` are the send templates.
 */
export function checkVariables(steps: readonly StepExtras[], templates: readonly string[], path: string): void {
  const written = new Set<string>();
  const read: string[] = templates.flatMap(templateVars);
  for (const s of steps) {
    for (const a of s.actions ?? []) {
      const v = varsOf(a);
      for (const w of v.writes) written.add(w);
      read.push(...v.reads);
    }
    for (const name of [s.test, s.condexec]) if (name !== undefined) read.push(name);
  }
  for (const name of read)
    if (!written.has(name))
      throw new LoadgenUsageError(
        `${path}: variable $${name} is used but never assigned (docs/LOADGEN.md "Scenario actions and variables")`,
      );
}
