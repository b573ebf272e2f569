/**
 * The lake's data on a local directory (what storage.lakehouse.data_path names today). A put
 * writes a temp file beside the target, fsyncs it and renames it into place, so a reader sees the
 * old file or the new one (docs/STORAGE.md "Object stores").
 */
import { randomBytes } from "node:crypto";
import { copyFile, mkdir, open, readdir, rename, rm, stat } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { AppError } from "../../core/index.ts";
import { checkKey, checkPrefix, type ObjectHead, type ObjectInfo, type ObjectStore, type PutSource } from "./types.ts";

/** Temp files of unfinished puts: never listed, and a crash leaves only these behind. */
const TEMP_SUFFIX = ".svc-tmp";

const isMissing = (e: unknown) =>
  (e as { code?: string }).code === "ENOENT" || (e as { code?: string }).code === "ENOTDIR";

export class LocalStore implements ObjectStore {
  readonly kind = "local" as const;
  readonly location: string;

  constructor(readonly root: string) {
    this.location = root;
  }

  private pathOf(key: string): string {
    return join(this.root, ...checkKey(key).split("/"));
  }

  async put(key: string, source: PutSource): Promise<void> {
    const target = this.pathOf(key);
    await mkdir(dirname(target), { recursive: true });
    const temp = `${target}.${randomBytes(6).toString("hex")}${TEMP_SUFFIX}`;
    try {
      if (source instanceof Uint8Array) {
        const fh = await open(temp, "w");
        try {
          await fh.writeFile(source);
          await fh.sync();
        } finally {
          await fh.close();
        }
      } else {
        await copyFile(source.file, temp);
        const fh = await open(temp, "r+");
        try {
          await fh.sync();
        } finally {
          await fh.close();
        }
      }
      await rename(temp, target);
      const dir = await open(dirname(target), "r");
      try {
        await dir.sync(); // the rename itself survives a crash
      } finally {
        await dir.close();
      }
    } catch (e) {
      await rm(temp, { force: true });
      if (!(source instanceof Uint8Array) && isMissing(e))
        throw new AppError("NOT_FOUND", `put ${key}: source file ${source.file} does not exist`, { cause: e });
      throw new AppError("DEPENDENCY_FAILED", `put ${key} into ${this.root}: ${(e as Error).message}`, { cause: e });
    }
  }

  async get(key: string): Promise<Uint8Array> {
    const file = Bun.file(this.pathOf(key));
    try {
      return await file.bytes();
    } catch (e) {
      throw this.readError(key, e);
    }
  }

  async getStream(key: string): Promise<ReadableStream<Uint8Array>> {
    const path = this.pathOf(key);
    try {
      await stat(path);
    } catch (e) {
      throw this.readError(key, e);
    }
    return Bun.file(path).stream();
  }

  async getRange(key: string, offset: number, length: number): Promise<Uint8Array> {
    const fh = await open(this.pathOf(key), "r").catch((e) => {
      throw this.readError(key, e);
    });
    try {
      const buf = new Uint8Array(length);
      let got = 0;
      while (got < length) {
        const { bytesRead } = await fh.read(buf, got, length - got, offset + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      return buf.subarray(0, got);
    } finally {
      await fh.close();
    }
  }

  async head(key: string): Promise<ObjectHead | undefined> {
    try {
      const s = await stat(this.pathOf(key));
      if (!s.isFile()) return undefined;
      // No content hash on a file system: size and modification time identify a version.
      return { size: s.size, etag: `${s.size.toString(16)}-${Math.trunc(s.mtimeMs * 1000).toString(16)}` };
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw this.readError(key, e);
    }
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    checkPrefix(prefix);
    // Only the directories the prefix can reach are walked: "a/b/c" starts in <root>/a/b.
    const cut = prefix.lastIndexOf("/");
    const start = cut < 0 ? this.root : join(this.root, ...prefix.slice(0, cut).split("/"));
    const found: ObjectInfo[] = [];
    const walk = async (dir: string): Promise<void> => {
      let entries: import("node:fs").Dirent[];
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (e) {
        if (isMissing(e)) return;
        throw new AppError("DEPENDENCY_FAILED", `list ${prefix} in ${this.root}: ${(e as Error).message}`, {
          cause: e,
        });
      }
      for (const ent of entries) {
        const p = join(dir, ent.name);
        const key = relative(this.root, p).split(sep).join("/");
        if (ent.isDirectory()) {
          if (key.startsWith(prefix) || prefix.startsWith(`${key}/`)) await walk(p);
        } else if (ent.isFile() && key.startsWith(prefix) && !ent.name.endsWith(TEMP_SUFFIX)) {
          const s = await stat(p).catch(() => undefined); // removed meanwhile: not listed
          if (s) found.push({ key, size: s.size, lastModified: s.mtime });
        }
      }
    };
    await walk(start);
    found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    yield* found;
  }

  async delete(key: string): Promise<void> {
    try {
      await rm(this.pathOf(key), { force: true });
    } catch (e) {
      throw new AppError("DEPENDENCY_FAILED", `delete ${key} in ${this.root}: ${(e as Error).message}`, { cause: e });
    }
  }

  async deleteMany(keys: string[]): Promise<void> {
    for (const key of keys) await this.delete(key);
  }

  private readError(key: string, e: unknown): AppError {
    if (isMissing(e)) return new AppError("NOT_FOUND", `object ${key} does not exist in ${this.root}`, { cause: e });
    return new AppError("DEPENDENCY_FAILED", `read ${key} in ${this.root}: ${(e as Error).message}`, { cause: e });
  }
}
