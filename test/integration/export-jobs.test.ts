/**
 * The /exports queue over a real settings database file: at most `workers` jobs run at once in
 * FIFO order; failures keep their reason; a restart re-queues what was queued or running; the
 * sweep removes expired jobs with their files and expired share links.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ExportJobRunner } from "../../src/api/index.ts";
import { AppError, createLogger } from "../../src/core/index.ts";
import { createSettingsStore, type ExportJob, type SettingsStore } from "../../src/settings/index.ts";
import { tempDir, waitFor } from "../harness.ts";

interface Gate {
  started: string[];
  release(id: string, result: Uint8Array | Error): void;
}

/** A produce() whose jobs finish only when the test releases them. */
function gatedProducer(): { gate: Gate; produce: (j: ExportJob) => Promise<{ bytes: Uint8Array }> } {
  const waiting = new Map<string, (r: Uint8Array | Error) => void>();
  const gate: Gate = {
    started: [],
    release(id, result) {
      const f = waiting.get(id);
      if (!f) throw new Error(`job ${id} is not running`);
      waiting.delete(id);
      f(result);
    },
  };
  const produce = (j: ExportJob) =>
    new Promise<{ bytes: Uint8Array }>((resolve, reject) => {
      gate.started.push(j.id);
      waiting.set(j.id, (r) => (r instanceof Error ? reject(r) : resolve({ bytes: r })));
    });
  return { gate, produce };
}

function openStore(path: string): SettingsStore {
  const s = createSettingsStore({ path, games: false });
  s.db.open();
  return s;
}

const status = (s: SettingsStore, id: string) => s.exportJobs.get(id)?.status;

describe("export job runner", () => {
  test("FIFO with two workers, results and failures recorded, files 0600 and complete", async () => {
    await using dir = tempDir();
    const store = openStore(join(dir.path, "settings.db"));
    const { gate, produce } = gatedProducer();
    const files = join(dir.path, "exports");
    const runner = new ExportJobRunner({
      jobs: store.exportJobs,
      shareLinks: store.shareLinks,
      dir: files,
      produce,
      logger: createLogger({ test: true }),
      workers: 2,
    });
    await runner.start();
    const jobs = ["pcap", "text", "pcap", "text"].map((f) => runner.submit("alice", f, { n: f }));
    expect(gate.started).toEqual([jobs[0]!.id, jobs[1]!.id]);
    expect(jobs.map((j) => status(store, j.id))).toEqual(["running", "running", "queued", "queued"]);

    gate.release(jobs[1]!.id, new AppError("NOT_FOUND", "no messages for x"));
    await waitFor("the third job starts", () => gate.started.length === 3);
    expect(gate.started[2]).toBe(jobs[2]!.id);
    expect(store.exportJobs.get(jobs[1]!.id)).toMatchObject({ status: "failed", error: "no messages for x" });

    gate.release(jobs[0]!.id, new TextEncoder().encode("pcap bytes"));
    await waitFor("the fourth job starts", () => gate.started.length === 4);
    const done = store.exportJobs.get(jobs[0]!.id)!;
    expect(done).toMatchObject({ status: "done", bytes: 10 });
    expect(readFileSync(done.filePath, "utf8")).toBe("pcap bytes");
    expect(statSync(done.filePath).mode & 0o777).toBe(0o600);
    expect(statSync(files).mode & 0o777).toBe(0o700);

    // An unexpected error is logged and reported generically (no internals in the job).
    gate.release(jobs[2]!.id, new Error("disk on fire at /secret/path"));
    gate.release(jobs[3]!.id, new Uint8Array(0));
    await runner.idle();
    expect(store.exportJobs.get(jobs[2]!.id)!.error).not.toContain("/secret/path");
    expect(status(store, jobs[3]!.id)).toBe("done");
    expect(readdirSync(files).filter((f) => f.endsWith(".part"))).toEqual([]);

    // Jobs are per user.
    expect(() => runner.jobOf(jobs[0]!.id, "mallory")).toThrow(/no export/);
    expect(runner.jobOf(jobs[0]!.id, "ALICE").id).toBe(jobs[0]!.id);
    await runner.stop();
    store.db.close();
  });

  test("a restart re-queues queued and running jobs; the sweep deletes expired jobs, their files and expired share links", async () => {
    await using dir = tempDir();
    const dbPath = join(dir.path, "settings.db");
    const files = join(dir.path, "exports");
    const logger = createLogger({ test: true });
    const first = openStore(dbPath);
    const one = gatedProducer();
    const r1 = new ExportJobRunner({
      jobs: first.exportJobs,
      shareLinks: first.shareLinks,
      dir: files,
      produce: one.produce,
      logger,
      workers: 1,
    });
    await r1.start();
    const a = r1.submit("alice", "pcap", {});
    const b = r1.submit("alice", "pcap", {});
    expect([status(first, a.id), status(first, b.id)]).toEqual(["running", "queued"]);
    // The process goes away with a running and a queued job (stop does not wait for a hung job here).
    first.db.close();

    const store = openStore(dbPath);
    const two = gatedProducer();
    const ttlMs = 60_000;
    const r2 = new ExportJobRunner({
      jobs: store.exportJobs,
      shareLinks: store.shareLinks,
      dir: files,
      produce: two.produce,
      logger,
      workers: 2,
      ttlMs,
    });
    await r2.start();
    expect(two.gate.started).toEqual([a.id, b.id]);
    two.gate.release(a.id, new TextEncoder().encode("x"));
    two.gate.release(b.id, new TextEncoder().encode("y"));
    await r2.idle();
    const path = store.exportJobs.get(a.id)!.filePath;
    expect(existsSync(path)).toBe(true);

    const live = store.shareLinks.create("alice", {}, Date.now() + 3_600_000);
    const dead = store.shareLinks.create("alice", {}, Date.now() + 1000);
    r2.sweep(Date.now() + 2000);
    expect(store.exportJobs.get(a.id)).toBeDefined();
    expect(store.shareLinks.get(live.id)).toBeDefined();
    expect(store.shareLinks.get(dead.id, 0)).toBeUndefined();

    r2.sweep(Date.now() + ttlMs + 1000);
    expect(store.exportJobs.get(a.id)).toBeUndefined();
    expect(existsSync(path)).toBe(false);
    await r2.stop();
    store.db.close();
  });

  test("a user with too many unfinished jobs gets 429", async () => {
    await using dir = tempDir();
    const store = openStore(join(dir.path, "settings.db"));
    const { produce } = gatedProducer();
    const runner = new ExportJobRunner({
      jobs: store.exportJobs,
      shareLinks: store.shareLinks,
      dir: join(dir.path, "exports"),
      produce,
      logger: createLogger({ test: true }),
    });
    await runner.start();
    for (let i = 0; i < 10; i++) runner.submit("alice", "pcap", {});
    expect(() => runner.submit("alice", "pcap", {})).toThrow(expect.objectContaining({ code: "RATE_LIMITED" }));
    expect(runner.submit("bob", "pcap", {}).status).toBe("queued");
    store.db.close();
  });
});
