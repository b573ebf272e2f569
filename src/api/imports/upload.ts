import { open, type FileHandle } from "node:fs/promises";
import { AppError, errorMessage } from "../../core/index.ts";
import { MultipartReader, type PartHeaders } from "./multipart.ts";

/**
 * A capture upload written to a spool file as it arrives (docs/ARCHITECTURE.md "PCAP import"):
 * the request body is never held whole in memory, and the file is then mapped read-only
 * (`Bun.mmap`), so the capture's pages are file-backed and the kernel can drop them.
 */
export interface SpooledUpload {
  /** Text fields (every part but the file), each at most MAX_FIELD_BYTES. */
  fields: Record<string, string>;
  /** The part named `file` that carries a filename, written to `path`. */
  file: { name: string; bytes: number } | null;
}

const MAX_FIELD_BYTES = 4096;
const MAX_PARTS = 32;

const invalid = (message: string) => new AppError("VALIDATION", message, { details: { fields: ["file"] } });

/** Reads the multipart body into `path` (the file part) and memory (the small fields). */
export async function spoolUpload(
  body: ReadableStream<Uint8Array>,
  boundary: string,
  path: string,
  maxFileBytes: number,
): Promise<SpooledUpload> {
  const fields: Record<string, string> = {};
  let file: SpooledUpload["file"] = null;
  let out: FileHandle | null = null;
  let current: { part: PartHeaders; isFile: boolean; text: Uint8Array[]; bytes: number } | null = null;
  let parts = 0;
  const reader = new MultipartReader(boundary, {
    start(part) {
      if (++parts > MAX_PARTS) throw invalid(`the form has more than ${MAX_PARTS} parts`);
      const isFile = part.name === "file" && part.filename !== undefined;
      if (isFile && file !== null) throw invalid("file: send one capture per request");
      current = { part, isFile, text: [], bytes: 0 };
      if (isFile) file = { name: part.filename || "upload.pcap", bytes: 0 };
    },
    async data(bytes) {
      const c = current!;
      c.bytes += bytes.length;
      if (c.isFile) {
        if (c.bytes > maxFileBytes)
          throw new AppError(
            "PAYLOAD_TOO_LARGE",
            `file: more than coordinator.http_server.max_body_bytes (${maxFileBytes}) bytes`,
          );
        out ??= await openSpool(path);
        await writeAll(out, bytes);
      } else {
        if (c.bytes > MAX_FIELD_BYTES)
          throw new AppError("VALIDATION", `${c.part.name}: longer than ${MAX_FIELD_BYTES} bytes`, {
            details: { fields: [c.part.name] },
          });
        c.text.push(bytes.slice());
      }
    },
    end() {
      const c = current!;
      if (c.isFile) file = { name: file!.name, bytes: c.bytes };
      else fields[c.part.name] ??= Buffer.concat(c.text).toString("utf8");
      current = null;
    },
  });
  const chunks = body.getReader();
  try {
    // A client that goes away mid-upload rejects the read: its mistake, not a server error.
    const read = () =>
      chunks.read().catch((e: unknown) => {
        throw new AppError("BAD_REQUEST", "the upload ended before the body was complete", { cause: e });
      });
    for (let next = await read(); !next.done; next = await read()) {
      const r = await reader.push(next.value);
      if (!r.ok)
        throw invalid(`the multipart/form-data body is malformed (${r.reason}${r.detail ? `: ${r.detail}` : ""})`);
    }
    const end = reader.finish();
    if (!end.ok)
      throw invalid(`the multipart/form-data body is malformed (${end.reason}${end.detail ? `: ${end.detail}` : ""})`);
  } finally {
    chunks.releaseLock();
    await (out as FileHandle | null)?.close();
  }
  // An empty file part never opened the spool: there is nothing to map.
  if (file !== null && (file as { bytes: number }).bytes === 0) await (await openSpool(path)).close();
  return { fields, file };
}

async function openSpool(path: string): Promise<FileHandle> {
  try {
    return await open(path, "wx", 0o600);
  } catch (e) {
    throw new AppError("UNAVAILABLE", "the upload could not be spooled to the state directory", { cause: e });
  }
}

async function writeAll(fh: FileHandle, bytes: Uint8Array): Promise<void> {
  try {
    for (let off = 0; off < bytes.length; ) off += (await fh.write(bytes, off, bytes.length - off)).bytesWritten;
  } catch (e) {
    // ENOSPC and friends: the server's problem, not the client's; the message stays generic.
    throw new AppError(
      "UNAVAILABLE",
      `the upload could not be spooled to the state directory (${(e as NodeJS.ErrnoException).code ?? errorMessage(e)})`,
      { cause: e },
    );
  }
}
