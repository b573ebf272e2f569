import { describe, expect, test } from "bun:test";
import { createLogger } from "./log.ts";
import type { Module } from "./lifecycle.ts";
import { StartupState, startInPhases } from "./startup.ts";

/** A module that records its start and stop in `events`. */
function recording(name: string, events: string[]): Module {
  return {
    name,
    async start() {
      events.push(`start ${name}`);
    },
    async stop() {
      events.push(`stop ${name}`);
    },
  };
}

describe('startInPhases (docs/ARCHITECTURE.md "Start-up")', () => {
  // Requests that reached the ports opened in phase one are answered before phase two's first
  // synchronous work: phase two starts from a later turn of the event loop, not within the call.
  test("phase two starts its first module only after phase one has returned and queued work has run", async () => {
    const events: string[] = [];
    const http = recording("http", events);
    const lake = recording("lake", events);
    const state = new StartupState();
    const phases = await startInPhases([lake, http], new Set([http]), state, createLogger({ test: true }));
    events.push("phase one returned");
    queueMicrotask(() => events.push("queued work"));
    await state.whenReady();
    expect(events).toEqual(["start http", "phase one returned", "queued work", "start lake"]);
    await phases.stop();
    expect(events.slice(4)).toEqual(["stop http", "stop lake"]);
  });
});
