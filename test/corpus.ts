/**
 * Where the public test corpus lives: `../shared/corpus` beside the repository (how CI checks it
 * out), else /work/shared/corpus; `SVC_CORPUS_DIR` overrides. Third-party data, never committed.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

const candidates = [
  process.env.SVC_CORPUS_DIR,
  // The folder named shared beside the repository's own folder.
  resolve(import.meta.dir, "..", "..", "shared", "corpus"),
  "/work/shared/corpus",
].filter((p): p is string => Boolean(p));

export const CORPUS_DIR: string = candidates.find((p) => existsSync(p)) ?? candidates[candidates.length - 1]!;

export const corpusPath = (...parts: string[]): string => join(CORPUS_DIR, ...parts);
