import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AppError, errorMessage, type Logger, type Module } from "../../core/index.ts";
import type { ExportJob, ExportJobsRepo, ShareLinksRepo } from "../../settings/index.ts";
import { EXPORT_TTL_MS, EXPORT_WORKERS, MAX_PENDING_PER_USER } from "./model.ts";
import { statusFor } from "../errors.ts";

export interface JobRunnerOptions {
  jobs: ExportJobsRepo;
  shareLinks: ShareLinksRepo;
  /** Where finished files live (created 0700; files 0600: they hold call data). */
  dir: string;
  /** Renders one job's file, and the nodes it misses when partial; a thrown AppError's message becomes the job's `error`. */
  produce: (job: ExportJob) => Promise<{ bytes: Uint8Array; partial?: string | undefined }>;
  logger: Logger;
  ttlMs?: number;
  workers?: number;
  /** How often expired jobs, files and share links are removed. */
  sweepIntervalMs?: number;
}

/**
 * The `/exports` queue (statuses and transitions in model.ts): in process, FIFO, a few workers.
 * The settings database is the record; memory holds only the order. A start re-queues what a
 * previous process left queued or running, and sweeps expired jobs (file first, then row) and
 * expired share links.
 */
export class ExportJobRunner implements Module {
  readonly name = "export-jobs";
  private readonly queue: string[] = [];
  private readonly running = new Map<string, Promise<void>>();
  private readonly ttlMs: number;
  private readonly workers: number;
  private timer: ReturnType<typeof setInterval> | undefined;
  private stopping = false;

  constructor(private readonly o: JobRunnerOptions) {
    this.ttlMs = o.ttlMs ?? EXPORT_TTL_MS;
    this.workers = o.workers ?? EXPORT_WORKERS;
  }

  async start(): Promise<void> {
    this.stopping = false;
    mkdirSync(this.o.dir, { recursive: true, mode: 0o700 });
    this.sweep();
    for (const j of this.o.jobs.listByStatus(["running", "queued"])) {
      if (j.status === "running") this.o.jobs.setStatus(j.id, "queued");
      this.queue.push(j.id);
    }
    if (this.queue.length > 0) this.o.logger.info("export jobs re-queued after restart", { jobs: this.queue.length });
    this.timer = setInterval(() => this.sweep(), this.o.sweepIntervalMs ?? 10 * 60_000);
    this.timer.unref?.();
    this.pump();
  }

  /** Stops taking jobs and waits for the running ones (bounded by the query time-out); queued ones stay queued. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.running.values()]);
  }

  /** A new job for `username`; 429 when they already have MAX_PENDING_PER_USER unfinished ones. */
  submit(username: string, format: string, request: Record<string, unknown>): ExportJob {
    const pending = this.o.jobs
      .listByStatus(["queued", "running"])
      .filter((j) => j.username.toLowerCase() === username.toLowerCase()).length;
    if (pending >= MAX_PENDING_PER_USER) {
      throw new AppError("RATE_LIMITED", `${pending} exports are still queued or running; wait for them to finish`, {
        details: { pending },
      });
    }
    const job = this.o.jobs.create(username, format, request);
    this.queue.push(job.id);
    this.pump();
    return job;
  }

  /** The caller's job, or 404 (another user's job is reported as unknown). */
  jobOf(id: string, username: string): ExportJob {
    const j = this.o.jobs.get(id);
    if (!j || j.username.toLowerCase() !== username.toLowerCase() || this.expired(j))
      throw new AppError("NOT_FOUND", `no export ${id}`);
    return j;
  }

  /** Runs until no job is queued; resolves when idle (tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
  }

  private pump(): void {
    while (!this.stopping && this.running.size < this.workers && this.queue.length > 0) {
      const id = this.queue.shift()!;
      const p = this.run(id).finally(() => {
        this.running.delete(id);
        this.pump();
      });
      this.running.set(id, p);
    }
  }

  private async run(id: string): Promise<void> {
    const job = this.o.jobs.get(id);
    if (job?.status !== "queued") return;
    this.o.jobs.setStatus(id, "running");
    const path = join(this.o.dir, `${id}.${job.format === "pcap" ? "pcap" : "txt"}`);
    try {
      const { bytes, partial } = await this.o.produce(job);
      // Write then rename: a download never sees half a file.
      const tmp = `${path}.part`;
      writeFileSync(tmp, bytes, { mode: 0o600 });
      chmodSync(tmp, 0o600);
      renameSync(tmp, path);
      // A file that misses a node says so in its status and download (docs/ARCHITECTURE.md "Reads over several nodes").
      this.o.jobs.setStatus(id, "done", { filePath: path, bytes: bytes.length, partial: partial ?? "" });
    } catch (e) {
      // The same rule as an HTTP answer (src/api/errors.ts): a server fault's message stays in the log.
      const client = e instanceof AppError && statusFor(e.code) < 500;
      if (!client) this.o.logger.error("export job failed", { job: id, error: e });
      const message = client ? errorMessage(e) : "internal error while rendering the export (see the coordinator log)";
      if (this.o.jobs.get(id)) this.o.jobs.setStatus(id, "failed", { error: message });
    }
  }

  private expired(j: ExportJob, now = Date.now()): boolean {
    return j.createdAt + this.ttlMs <= now;
  }

  /** Deletes jobs past their TTL (file, then row) and expired share links. Never throws. */
  sweep(now = Date.now()): void {
    try {
      for (const j of this.o.jobs.listOlderThan(this.ttlMs, now)) {
        if (this.running.has(j.id)) continue;
        if (j.filePath) rmSync(j.filePath, { force: true });
        this.o.jobs.delete(j.id);
      }
      this.o.shareLinks.deleteExpired(now);
    } catch (e) {
      this.o.logger.warn("export sweep failed", { error: e });
    }
  }
}
