import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/**
 * The line transport of `svc mcp` (docs/MCP.md "svc mcp"): one JSON-RPC message per line on stdin,
 * one per line on stdout. It replaces the SDK's StdioServerTransport, which closes the whole server
 * (exit 0, no answer) when a line outgrows its buffer and answers nothing to a line that is not
 * JSON. Here one bad line gets its JSON-RPC error with id null and the next lines are served:
 * - a line longer than MAX_LINE_BYTES: -32600, its bytes are dropped as they arrive, memory stays
 *   bounded whatever the client sends;
 * - a line that is not JSON: -32700; JSON that is not a JSON-RPC message: -32600.
 */
export const MAX_LINE_BYTES = 1024 * 1024;

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

const NEWLINE = 0x0a;

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private pieces: Buffer[] = [];
  private size = 0;
  /** True while the rest of an over-long line is dropped, up to its newline. */
  private dropping = false;
  private closed = false;

  constructor(
    private readonly input: NodeJS.ReadableStream,
    private readonly output: NodeJS.WritableStream,
    private readonly maxLineBytes = MAX_LINE_BYTES,
  ) {}

  private readonly ondata = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    let start = 0;
    while (start < bytes.length) {
      const newline = bytes.indexOf(NEWLINE, start);
      const end = newline === -1 ? bytes.length : newline;
      if (!this.dropping) {
        if (this.size + (end - start) > this.maxLineBytes) {
          this.dropping = true;
          this.pieces = [];
          this.size = 0;
          this.refuse(
            INVALID_REQUEST,
            `request line longer than the ${this.maxLineBytes} byte limit of svc mcp (docs/MCP.md "svc mcp"); the line is ignored`,
          );
        } else {
          this.pieces.push(Buffer.from(bytes.subarray(start, end)));
          this.size += end - start;
        }
      }
      if (newline === -1) break;
      if (this.dropping) this.dropping = false;
      else this.readLine(Buffer.concat(this.pieces).toString("utf8"));
      this.pieces = [];
      this.size = 0;
      start = newline + 1;
    }
  };

  private readonly onInputError = (error: Error): void => {
    this.onerror?.(error);
  };

  async start(): Promise<void> {
    this.input.on("data", this.ondata);
    this.input.on("error", this.onInputError);
  }

  private readLine(raw: string): void {
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "") return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (e) {
      this.refuse(PARSE_ERROR, `parse error: the line is not JSON (${(e as Error).message})`);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(json);
    if (!parsed.success) {
      this.refuse(INVALID_REQUEST, "invalid request: the line is not a JSON-RPC 2.0 message");
      return;
    }
    this.onmessage?.(parsed.data);
  }

  /** A JSON-RPC error for a line that never became a request: its id is unknown, so null (JSON-RPC 2.0, section 5). */
  private refuse(code: number, message: string): void {
    this.write(`${JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } })}\n`).catch((e: unknown) =>
      this.onerror?.(e as Error),
    );
  }

  private write(text: string): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(text)) resolve();
      else this.output.once("drain", resolve);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(`${JSON.stringify(message)}\n`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off("data", this.ondata);
    this.input.off("error", this.onInputError);
    // Paused, stdin no longer keeps the process alive once the server is closed.
    if (this.input.listenerCount("data") === 0) this.input.pause();
    this.pieces = [];
    this.onclose?.();
  }
}
