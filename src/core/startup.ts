import { AppError } from "./errors.ts";
import type { Logger } from "./log.ts";
import { stopAll, type Module } from "./lifecycle.ts";

/**
 * Start-up in two phases (docs/ARCHITECTURE.md "Start-up"): the HTTP listeners, the settings
 * database and the logins start first and answer at once; the lake (catalog check and repair,
 * orphan sweep, DuckDB, views), the ingest listeners and what reads or writes the lake start after
 * them, in the background. Until they have, /health carries a `startup` check in state `starting`
 * naming what still runs, and routes that need the lake answer 503 `STARTING` with Retry-After.
 */
export class StartupState {
  readonly startedAtMs: number;
  private readyAtMs: number | undefined;
  private failure: unknown;
  private pending: string[] = [];
  private current: { name: string; step?: string } | undefined;
  private readonly settled: Promise<void>;
  private settle!: { ok: () => void; fail: (e: unknown) => void };

  constructor(nowMs = Date.now()) {
    this.startedAtMs = nowMs;
    this.settled = new Promise<void>((ok, fail) => (this.settle = { ok, fail }));
    // Nobody may be waiting when the start fails (serve is, tests may not be): no unhandled rejection.
    this.settled.catch(() => {});
  }

  /** True once every module has started. */
  get ready(): boolean {
    return this.readyAtMs !== undefined;
  }

  /** Milliseconds the whole start took, once ready. */
  get readyAfterMs(): number | undefined {
    return this.readyAtMs === undefined ? undefined : this.readyAtMs - this.startedAtMs;
  }

  /** Resolves when every module has started; rejects with the error that stopped the start. */
  whenReady(): Promise<void> {
    return this.settled;
  }

  /** What still runs, the module starting now first (with its current step), e.g. `lake (views), hep-pipeline`. */
  running(): string[] {
    if (this.ready) return [];
    const now = this.current
      ? [this.current.step ? `${this.current.name} (${this.current.step})` : this.current.name]
      : [];
    return [...now, ...this.pending.filter((n) => n !== this.current?.name)];
  }

  /** The modules still to start, in order. */
  expect(names: readonly string[]): void {
    this.pending = [...names];
  }

  begin(name: string): void {
    this.current = { name };
  }

  /** A module's own step within its start (the lake: catalog, engine, orphan sweep, views). */
  step(step: string): void {
    if (this.current) this.current.step = step;
  }

  done(name: string): void {
    this.pending = this.pending.filter((n) => n !== name);
    if (this.current?.name === name) this.current = undefined;
  }

  markReady(nowMs = Date.now()): void {
    if (this.ready || this.failure !== undefined) return;
    this.readyAtMs = nowMs;
    this.pending = [];
    this.current = undefined;
    this.settle.ok();
  }

  markFailed(e: unknown): void {
    if (this.ready || this.failure !== undefined) return;
    this.failure = e ?? new Error("start-up failed");
    this.settle.fail(this.failure);
  }

  /**
   * Throws `STARTING` (503 with Retry-After, src/api/errors.ts) unless ready: for routes that need
   * the lake. `what` names the feature in the message.
   */
  assertReady(what = "this request"): void {
    if (this.ready) return;
    const running = this.running();
    throw new AppError(
      "STARTING",
      `svc is still starting${running.length ? ` (${running.join(", ")})` : ""}: ${what} needs the lake; retry in a few seconds`,
      {
        details: { retry_after_sec: STARTING_RETRY_AFTER_SEC },
      },
    );
  }
}

/** The Retry-After of a `STARTING` answer: a lake of thousands of files opens in a few seconds. */
export const STARTING_RETRY_AFTER_SEC = 2;

/** Resolves after the event loop has polled for I/O once (a 0 ms timer: pending sockets are read first). */
export const yieldToEventLoop = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

/** A state that is ready at once: processes and tests that start everything before serving. */
export function readyStartup(): StartupState {
  const s = new StartupState();
  s.markReady();
  return s;
}

/**
 * Starts `modules` in two phases: those in `first` (in list order) before this returns, then the
 * rest in list order in the background, reported on `state`. `stop()` stops what has started, in
 * reverse list order (so the stop order is the one of a start in list order); during the background
 * phase it first lets the module starting now finish, then starts nothing more. A module failing in
 * the background stops everything started and rejects `state.whenReady()`.
 */
export async function startInPhases(
  modules: readonly Module[],
  first: ReadonlySet<Module>,
  state: StartupState,
  logger: Logger,
): Promise<{ stop(): Promise<boolean> }> {
  const started = new Set<Module>();
  let stopping = false;
  let stopped: Promise<boolean> | undefined;
  const stopStarted = () =>
    (stopped ??= stopAll(
      modules.filter((m) => started.has(m)),
      logger,
    ));
  const startOne = async (m: Module) => {
    state.begin(m.name);
    try {
      await m.start();
    } catch (e) {
      logger.error("module failed to start", { module: m.name, error: e });
      throw e;
    }
    started.add(m);
    state.done(m.name);
  };
  state.expect(modules.map((m) => m.name));
  try {
    for (const m of modules) if (first.has(m)) await startOne(m);
  } catch (e) {
    await stopStarted();
    state.markFailed(e);
    throw e;
  }
  const background = (async () => {
    try {
      for (const m of modules) {
        if (first.has(m)) continue;
        // One turn of the event loop first: requests that reached the open ports meanwhile are
        // answered before the next module's synchronous work (the lake's catalog check, loading
        // DuckDB) holds the thread for tens of milliseconds.
        await yieldToEventLoop();
        if (stopping) {
          state.markFailed(new AppError("UNAVAILABLE", "stopped during start-up"));
          return;
        }
        await startOne(m);
      }
      state.markReady();
    } catch (e) {
      stopping = true;
      await stopStarted();
      state.markFailed(e);
    }
  })();
  return {
    async stop() {
      stopping = true;
      await background;
      return await stopStarted();
    },
  };
}
