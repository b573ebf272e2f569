/**
 * Runs the `<action>` block of a scenario step and decides a step's `test`/`chance`/`condexec`
 * (docs/LOADGEN.md "Scenario actions and variables"). Pure apart from the clock and Math.random:
 * the call supplies the message, its variables, a template renderer and a log sink.
 */
import type { Action, Compare, Operand, StepExtras } from "./scenario-actions.ts";
import type { CallVars } from "./scenario-vars.ts";
import type { SipWireMessage } from "./sip-wire.ts";

export interface ActionEnv {
  vars: CallVars;
  /** The message the step received (recv), sent (send), or the last one received (nop). */
  msg: SipWireMessage | undefined;
  /** Keywords and `[$var]` of a one-line template. */
  render(template: string): string;
  /** `<log>` and `<warning>` lines (docs/LOADGEN.md: they go to the message log). */
  log(line: string): void;
}

export type ActionOutcome =
  | { ok: true; jump?: number; stop?: "stop_call" | "stop_now" | "stop_gracefully" }
  | { ok: false; reason: string };

const operandValue = (o: Operand, env: ActionEnv) => ("value" in o ? o.value : env.vars.number(o.variable));

function compare(op: Compare, a: number, b: number): boolean {
  switch (op) {
    case "equal":
      return a === b;
    case "not_equal":
      return a !== b;
    case "greater_than":
      return a > b;
    case "less_than":
      return a < b;
    case "greater_than_equal":
      return a >= b;
    case "less_than_equal":
      return a <= b;
  }
}

/** The text an `ereg` searches, or undefined when the header or message is missing. */
function searchText(a: Extract<Action, { kind: "ereg" }>, env: ActionEnv): string | undefined {
  if (a.searchIn === "var") return env.vars.string(a.variable!);
  const m = env.msg;
  if (!m) return undefined;
  if (a.searchIn === "msg") return m.raw;
  if (a.searchIn === "body") return m.body;
  const values = m.headers.get(a.header!) ?? [];
  if (values.length === 0) return undefined;
  // sipp searches what follows the colon, the space included (` <sip:b@y>;tag=1`).
  if (a.occurrence !== undefined)
    return a.occurrence >= 1 && a.occurrence <= values.length ? ` ${values[a.occurrence - 1]}` : undefined;
  return ` ${values.join(", ")}`;
}

function ereg(a: Extract<Action, { kind: "ereg" }>, env: ActionEnv): ActionOutcome {
  const text = searchText(a, env);
  const m = text === undefined ? null : a.regexp.exec(text);
  if (m) a.assignTo.forEach((name, i) => env.vars.set(name, { kind: "string", s: m[i] ?? "" }));
  else for (const name of a.assignTo) env.vars.unset(name);
  if (a.checkIt && !m) return { ok: false, reason: `regexp no match (assign_to ${a.assignTo.join(",")})` };
  if (a.checkItInverse && m) return { ok: false, reason: `regexp matched (assign_to ${a.assignTo.join(",")})` };
  return { ok: true };
}

/** Runs the actions in order; the first failure, stop or jump ends the block (as sipp does). */
export function runActions(actions: readonly Action[], env: ActionEnv): ActionOutcome {
  const { vars } = env;
  for (const a of actions) {
    switch (a.kind) {
      case "ereg": {
        const r = ereg(a, env);
        if (!r.ok) return r;
        break;
      }
      case "assign":
        vars.set(a.to, { kind: "number", n: operandValue(a.from, env) });
        break;
      case "add":
      case "subtract":
      case "multiply":
      case "divide": {
        const x = vars.number(a.to);
        const y = operandValue(a.from, env);
        const n = a.kind === "add" ? x + y : a.kind === "subtract" ? x - y : a.kind === "multiply" ? x * y : x / y;
        vars.set(a.to, { kind: "number", n });
        break;
      }
      case "assignstr":
        vars.set(a.to, { kind: "string", s: env.render(a.template) });
        break;
      case "test":
        vars.set(a.to, { kind: "bool", b: compare(a.compare, vars.number(a.variable), operandValue(a.against, env)) });
        break;
      case "strcmp": {
        const other = "value" in a.against ? a.against.value : vars.string(a.against.variable);
        const mine = vars.string(a.variable);
        vars.set(a.to, { kind: "number", n: mine < other ? -1 : mine > other ? 1 : 0 });
        break;
      }
      case "todouble": {
        const n = vars.number(a.variable);
        if (Number.isNaN(n)) vars.unset(a.to);
        else vars.set(a.to, { kind: "number", n });
        break;
      }
      case "trim":
        vars.set(a.to, { kind: "string", s: vars.string(a.to).trim() });
        break;
      case "gettimeofday": {
        const now = Date.now();
        const parts = [Math.floor(now / 1000), (now % 1000) * 1000];
        a.to.forEach((name, i) => vars.set(name, { kind: "number", n: parts[i] ?? 0 }));
        break;
      }
      case "log":
        env.log(env.render(a.template));
        break;
      case "warning":
        env.log(`Warning: ${env.render(a.template)}`);
        break;
      case "error":
        return { ok: false, reason: `error: ${env.render(a.template)}` };
      case "jump":
        return { ok: true, jump: operandValue(a.to, env) };
      case "exec":
        return { ok: true, stop: a.cmd };
    }
  }
  return { ok: true };
}

/** `condexec`: whether the step runs at all. */
export function stepRuns(step: StepExtras, vars: CallVars): boolean {
  if (step.condexec === undefined) return true;
  return vars.truthy(step.condexec) !== (step.condexecInverse === true);
}

/** `test` and `chance`: whether a step's `next` is taken (both must agree; sipp's rule). */
export function takesNext(step: StepExtras, vars: CallVars, random = Math.random): boolean {
  if (step.test !== undefined && !vars.truthy(step.test)) return false;
  return step.chance === undefined || random() < step.chance;
}
