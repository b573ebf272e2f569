/**
 * The body of `POST /api/v1/control` (docs/LOADGEN.md "Control API"): `rate` and `pause` apply to
 * every engine; `scenario`, `transports` and `listeners` to the primary engine only. The answer
 * says which engines each change reached.
 */
import { AppError } from "../core/index.ts";
import type { Engine } from "./engine.ts";
import type { ListenerState } from "./engine-listeners.ts";
import type { TransportKind } from "./transport.ts";

export interface ControlChange {
  rate?: number;
  pause?: boolean;
  scenario?: string;
  transports?: Partial<Record<TransportKind, boolean>>;
  listeners?: Array<{ index: number; enabled: boolean }>;
}

const KEYS = "rate, pause, scenario, transports, listeners";
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Validates a control body; returns what to apply or a message for a 400. */
export function parseControl(body: unknown): ControlChange | string {
  if (!isObject(body)) return 'the body must be a JSON object such as {"rate": 50} or {"pause": true}';
  const out: ControlChange = {};
  for (const [k, v] of Object.entries(body)) {
    if (k === "rate") {
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0)
        return "rate must be a number ≥ 0 (calls per rate period)";
      out.rate = v;
    } else if (k === "pause") {
      if (typeof v !== "boolean") return "pause must be true or false";
      out.pause = v;
    } else if (k === "scenario") {
      if (typeof v !== "string" || v === "") return 'scenario must be a built-in scenario name such as "uac"';
      out.scenario = v.toLowerCase();
    } else if (k === "transports") {
      if (!isObject(v)) return 'transports must be an object such as {"udp": false}';
      out.transports = {};
      for (const [t, on] of Object.entries(v)) {
        if (t !== "udp" && t !== "tcp" && t !== "tls") return `transports: unknown transport "${t}" (udp, tcp, tls)`;
        if (typeof on !== "boolean") return `transports.${t} must be true or false`;
        out.transports[t] = on;
      }
    } else if (k === "listeners") {
      if (!Array.isArray(v)) return 'listeners must be an array such as [{"index": 0, "enabled": false}]';
      out.listeners = [];
      for (const l of v) {
        if (
          !isObject(l) ||
          !Number.isInteger(l.index) ||
          (l.index as number) < 0 ||
          typeof l.enabled !== "boolean" ||
          Object.keys(l).length !== 2
        )
          return 'each listener must be {"index": <listener number from 0>, "enabled": true|false}';
        out.listeners.push({ index: l.index as number, enabled: l.enabled });
      }
    } else return `unknown control key "${k}" (${KEYS})`;
  }
  if (Object.keys(out).length === 0) return `nothing to change: give one of ${KEYS}`;
  return out;
}

/** The listener switches a change asks of the primary engine, by listener index (later entries win). */
function listenerSwitches(primary: Engine, change: ControlChange): Map<number, boolean> {
  const states = primary.listeners.states();
  const wanted = new Map<number, boolean>();
  if ((change.transports || change.listeners) && states.length === 0)
    throw new AppError("CONFLICT", `the primary engine (${primary.id}) has no listeners: it is a client engine`);
  for (const [t, on] of Object.entries(change.transports ?? {})) {
    const of = states.filter((s) => s.transport === t);
    if (of.length === 0)
      throw new AppError(
        "CONFLICT",
        `the primary engine (${primary.id}) has no ${t} listener (it has ${[...new Set(states.map((s) => s.transport))].join(", ")})`,
      );
    for (const s of of) wanted.set(s.index, on);
  }
  for (const l of change.listeners ?? []) {
    if (l.index >= states.length)
      throw new AppError(
        "NOT_FOUND",
        `no listener ${l.index}: the primary engine (${primary.id}) has ${states.length} (0-${states.length - 1})`,
      );
    wanted.set(l.index, l.enabled);
  }
  return wanted;
}

export interface ControlAnswer {
  rate: number;
  paused: boolean;
  engines: number;
  /** Which engine ids each key reached. */
  applied: Record<string, string[]>;
  primary?: { id: string; scenario: string; listeners: ListenerState[] };
}

/** Applies a validated change: checks everything the primary engine must accept first, then changes. */
export async function applyControl(engines: readonly Engine[], change: ControlChange): Promise<ControlAnswer> {
  const primary = engines[0]!;
  const switches = listenerSwitches(primary, change);
  if (change.scenario !== undefined) primary.switchScenario(change.scenario);
  for (const e of engines) {
    if (change.rate !== undefined) e.setRate(change.rate);
    if (change.pause !== undefined) e.setPaused(change.pause);
  }
  for (const [index, on] of switches) await primary.listeners.setEnabled(index, on);
  const all = engines.map((e) => e.id);
  const applied: Record<string, string[]> = {};
  if (change.rate !== undefined) applied.rate = all;
  if (change.pause !== undefined) applied.pause = all;
  for (const k of ["scenario", "transports", "listeners"] as const)
    if (change[k] !== undefined) applied[k] = [primary.id];
  const s = primary.snapshot();
  const answer: ControlAnswer = { rate: s.rate, paused: s.paused, engines: engines.length, applied };
  if (change.scenario !== undefined || switches.size > 0)
    answer.primary = { id: primary.id, scenario: primary.scenario, listeners: primary.listeners.states() };
  return answer;
}
