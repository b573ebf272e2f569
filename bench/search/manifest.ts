import { readFileSync } from "node:fs";
import { join } from "node:path";

/** What generate.ts leaves beside the lake for run.ts: the time span, sizes and sample targets. */
export interface TableSummary {
  table: string;
  rows: number;
  files: number;
  bytes: number;
  smallFiles: number;
}

export interface SampleCall {
  /** A-leg Call-ID; the B leg (when `legs` is 2) is this + "_b2b-1". */
  callId: string;
  /** INVITE time, epoch µs. */
  t0Us: number;
  legs: 1 | 2;
  answered: boolean;
  caller: string;
  callee: string;
}

export interface Manifest {
  generatedAt: string;
  startUs: number;
  endUs: number;
  days: number;
  generationSeconds: number;
  tables: TableSummary[];
  samples: SampleCall[];
}

export interface LakePaths {
  catalog: string;
  data: string;
  tmp: string;
  manifest: string;
}

export function lakePaths(dir: string): LakePaths {
  return {
    catalog: join(dir, "catalog.sqlite"),
    data: join(dir, "lake") + "/",
    tmp: join(dir, "tmp"),
    manifest: join(dir, "manifest.json"),
  };
}

export function readManifest(dir: string): Manifest {
  return JSON.parse(readFileSync(lakePaths(dir).manifest, "utf8")) as Manifest;
}

/** Command-line flags `--name value` (and bare `--flag` = "true"). */
export function flags(argv: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith("--")) continue;
    const next = argv[i + 1];
    if (next === undefined || next.startsWith("--")) out.set(a.slice(2), "true");
    else {
      out.set(a.slice(2), next);
      i++;
    }
  }
  return out;
}

/** 1-minute load average of the machine (shared with other engineers: recorded with every result). */
export function loadAverage(): number {
  return Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
}
