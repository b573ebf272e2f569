/**
 * Runs a plan: one engine per profile, the control API on the primary engine, the `stat_period`
 * lines, `summary_json` files, and the exit code (0 when no call failed, 1 otherwise, like sipp).
 */
import { writeFileSync } from "node:fs";
import { refuseOpenBeyondLoopback, startControlApi, type ControlApi } from "./control-api.ts";
import { Engine } from "./engine.ts";
import { LoadgenUsageError, parseDuration } from "./options.ts";
import { openControlUsers, type ControlUsers } from "./control-users.ts";
import type { RunPlan } from "./profile.ts";
import { statsLine } from "./stats.ts";

export interface LoadgenIo {
  out(line: string): void;
  err(line: string): void;
}

export interface RunningLoadgen {
  engines: Engine[];
  api: ControlApi | undefined;
  /** Resolves with the exit code once every engine has finished. */
  finished: Promise<number>;
  stop(): Promise<void>;
}

/** True when the control API would answer anyone who reaches it: it has neither `api_token` nor internal users. */
export function controlApiOpen(plan: RunPlan): boolean {
  return plan.api_addr !== "" && plan.api_token === "" && !plan.auth;
}

/**
 * The control API's rules (docs/LOADGEN.md "Control API"), checked by a run before it opens a socket
 * and by `loadgen profile check`: internal users log in through it, and without `api_token` or `auth`
 * it listens on loopback only.
 */
export function checkPlanControlApi(plan: RunPlan): void {
  if (plan.auth && !plan.api_addr) throw new LoadgenUsageError("auth.type internal needs the control API (api_addr)");
  if (plan.api_addr) refuseOpenBeyondLoopback(plan.api_addr, plan.api_token !== "" || plan.auth !== undefined);
}

/** In a run of several engines (a composite file), an engine's error at construction or start names it: `client-1: …`. */
function namedErrors<T>(id: string, fn: () => T): T {
  const rename = (e: unknown): never => {
    if (!id || !(e instanceof Error)) throw e;
    if (e instanceof LoadgenUsageError) throw new LoadgenUsageError(`${id}: ${e.message}`);
    throw new Error(`${id}: ${e.message}`, { cause: e });
  };
  try {
    const r = fn();
    return (r instanceof Promise ? r.catch(rename) : r) as T;
  } catch (e) {
    return rename(e);
  }
}

export async function startPlan(plan: RunPlan, io: LoadgenIo): Promise<RunningLoadgen> {
  const multi = plan.engines.length > 1;
  const engines = plan.engines.map((p) =>
    namedErrors(multi ? p.id : "", () => new Engine({ opts: p.opts, mode: p.mode, id: p.id })),
  );
  const started: Engine[] = [];
  let api: ControlApi | undefined;
  let users: ControlUsers | undefined;
  const timers: Array<ReturnType<typeof setInterval>> = [];
  checkPlanControlApi(plan);
  try {
    for (const e of engines) {
      await namedErrors(multi ? e.id : "", () => e.start());
      started.push(e);
      const binds =
        e.binds.map((b) => `${b.transport} ${b.ip}:${b.port}`).join(", ") || `${e.opts.transport} (a socket per call)`;
      io.out(
        `loadgen [${e.id}] ${e.stats.mode} ${e.scenario} on ${binds}${e.opts.remote_addr && e.stats.mode === "load" ? ` → ${e.opts.remote_addr}` : ""}`,
      );
    }
    if (plan.api_addr) {
      users = plan.auth ? await openControlUsers(plan.auth, io.out) : undefined;
      api = startControlApi(plan.api_addr, plan.api_token, engines, users);
      io.out(`loadgen control API on port ${api.port}`);
      if (controlApiOpen(plan))
        io.err(
          `loadgen: warning: the control API on ${plan.api_addr} has no api_token or auth; any local user or process can control this run`,
        );
    }
  } catch (e) {
    for (const s of started) await s.stop();
    users?.close();
    throw e;
  }
  for (const e of engines) {
    if (!e.opts.stat_period) continue;
    const ms = parseDuration(e.opts.stat_period);
    if (ms > 0) timers.push(setInterval(() => io.out(statsLine(e.snapshot(), multi ? e.id : "")), ms));
  }
  const stop = async () => {
    for (const e of engines) await e.stop();
  };
  const finished = Promise.all(engines.map((e) => e.done)).then(() => {
    for (const t of timers) clearInterval(t);
    api?.stop();
    users?.close();
    let failed = 0;
    let ok = 0;
    for (const e of engines) {
      const s = e.snapshot();
      failed += s.calls_failed;
      ok += s.calls_successful;
      io.out(statsLine(s, multi ? e.id : ""));
      if (e.opts.summary_json) writeFileSync(e.opts.summary_json, `${JSON.stringify({ id: e.id, ...s }, null, 2)}\n`);
    }
    return failed > 0 ? 1 : ok > 0 || engines.some((e) => e.stats.mode === "management") ? 0 : 1;
  });
  return { engines, api, finished, stop };
}
