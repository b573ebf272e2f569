import { AppError, errorMessage, formatTimestampUs, hostText } from "../core/index.ts";
import { SIP_METHODS, type StreamFrame } from "../stream/index.ts";
import { UsageError, type ParsedFlags } from "./args.ts";
import { coordinatorClient, type CoordinatorClient } from "./coordinator-client.ts";
import { insecureTlsFromEnv, serverMessage } from "./http.ts";
import type { CliIo } from "./io.ts";
import { parsePostFilter, postFilterMatches, type PostFilter } from "./post-filter.ts";
import { parseProto, protoName } from "./proto.ts";
import { NOT_LIVE_FLAGS } from "./search-options.ts";

/**
 * `svc search --live` (docs/STREAM.md "svc search --live"): the coordinator's
 * `/api/v4/stream/hep` with the stream's filters, one line per event (or the JSON frame with
 * `--format json`) until interrupted, `--count` events, or the server refuses. A dropped
 * connection is tried again with backoff (1 s doubling to 30 s, with jitter) and the gap is told
 * on stderr. Before the WebSocket, one GET of the same URL checks credentials and filter: the
 * server answers 401/404/400 with a message a WebSocket handshake cannot carry.
 */

export interface LiveOptions {
  host: string;
  user?: string;
  pass?: string;
  token?: string;
  tokenHeader?: string;
  query: URLSearchParams;
  json: boolean;
  count?: number;
  grep: PostFilter[];
  exclude: PostFilter[];
}

const str = (flags: ParsedFlags, k: string): string | undefined => {
  const v = flags[k];
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
};

/** Validates the flags of a live search (`given`: flag names on the command line); UsageError names the flag. */
export function liveOptions(flags: ParsedFlags, given: ReadonlySet<string>): LiveOptions {
  const stray = NOT_LIVE_FLAGS.filter((k) => given.has(k));
  if (stray.length)
    throw new UsageError(
      `--${stray[0]} does not apply to --live (a live stream has no range, limit or SQL; use --grep field=value to narrow it)`,
    );
  const host = str(flags, "host");
  if (!host) throw new UsageError("--host is required (host:port of the coordinator)");
  const query = new URLSearchParams();
  const protoText = str(flags, "proto") ?? "sip";
  if (protoText.toLowerCase() !== "all") {
    for (const part of protoText.split(",")) {
      const n = parseProto(part);
      if (n === undefined || n > 255)
        throw new UsageError(
          `--proto "${part.trim()}" is not a HEP protocol (sip, rtcp, rtp, dns, log or a number 0-255; "all" for every protocol)`,
        );
      query.append("proto", String(n));
    }
  }
  for (const part of (str(flags, "method") ?? "").split(",").filter((m) => m.trim() !== "")) {
    const m = part.trim().toUpperCase();
    if (!(SIP_METHODS as readonly string[]).includes(m))
      throw new UsageError(`--method "${part.trim()}" is not a SIP method (${SIP_METHODS.join(", ")})`);
    query.append("method", m);
  }
  if (flags["only-requests"] === true) query.set("only_requests", "1");
  if (flags["include-payload"] === true) query.set("include_payload", "1");
  const history = str(flags, "history");
  if (history !== undefined) {
    if (!/^\d{1,9}$/.test(history))
      throw new UsageError(`--history must be a whole number of events, got "${history}"`);
    query.set("history", history);
  }
  const countText = str(flags, "count");
  if (countText !== undefined && (!/^\d{1,9}$/.test(countText) || Number(countText) < 1))
    throw new UsageError(`--count must be a whole number of events, 1 or more, got "${countText}"`);
  const format = (str(flags, "format") ?? "table").toLowerCase();
  if (format !== "table" && format !== "json")
    throw new UsageError(
      `--format ${format} does not apply to --live: one line per event (table, the default) or json`,
    );
  const user = str(flags, "user");
  const pass = typeof flags.pass === "string" && flags.pass !== "" ? flags.pass : undefined;
  if (pass !== undefined && !user) throw new UsageError("--pass needs --user");
  const token = str(flags, "token");
  const tokenHeader = str(flags, "token-header");
  if (tokenHeader && !token) throw new UsageError("--token-header needs --token");
  const grep = str(flags, "grep");
  const exclude = str(flags, "exclude");
  return {
    host,
    ...(user ? { user } : {}),
    ...(pass !== undefined ? { pass } : {}),
    ...(token ? { token } : {}),
    ...(tokenHeader ? { tokenHeader } : {}),
    query,
    json: format === "json",
    ...(countText !== undefined ? { count: Number(countText) } : {}),
    grep: grep ? [parsePostFilter(grep)] : [],
    exclude: exclude ? [parsePostFilter(exclude)] : [],
  };
}

/** Bun's WebSocket takes headers and TLS options; the DOM typing (tsconfig lib) only knows protocols. */
const BunWebSocket = WebSocket as unknown as new (url: string, options: Bun.WebSocketOptions) => WebSocket;

/** `2026-05-04 10:22:33.123` (UTC), the time form of the table output. */
const utc = (ms: number): string => formatTimestampUs(ms * 1000).slice(0, 23);
const endpoint = (ip: string | undefined, port: number | undefined) => `${hostText(ip ?? "?")}:${port ?? 0}`;

/** One event as one line: time, protocol, addresses, then the SIP summary (the payload never: use json). */
export function liveLine(f: StreamFrame): string {
  const head = `${utc(f.ts)}  ${protoName(f.proto).toUpperCase().padEnd(4)}  ${endpoint(f.src_ip, f.src_port)} -> ${endpoint(f.dst_ip, f.dst_port)}`;
  const s = f.sip;
  if (!s) return `${head}  node ${f.node_id}`;
  const what = s.resp_code ? `${s.resp_code} ${s.resp_text} (${s.method})` : s.method;
  return `${head}  ${what}  call-id ${s.callid}  ${s.from_user || "-"} -> ${s.to_user || "-"}  cseq ${s.cseq}`;
}

/** The stream URL of the coordinator (ws:// for http://, wss:// for https://). */
const streamUrl = (client: CoordinatorClient, query: URLSearchParams) =>
  `${client.apiBase.replace(/^http/, "ws")}/stream/hep${query.size ? `?${query}` : ""}`;

/**
 * Checks credentials and filter with a plain GET, which answers the filter the server grants
 * (docs/STREAM.md "Query"); says on stderr when the payload was asked and is not granted.
 */
async function preflight(client: CoordinatorClient, query: URLSearchParams, io: CliIo): Promise<void> {
  const path = `/stream/hep${query.size ? `?${query}` : ""}`;
  const r = await client.request("GET", path);
  if (r.status === 404)
    throw new AppError("NOT_FOUND", "the live stream is off on this coordinator (coordinator.hep_stream.enable)");
  if (r.status === 400) throw new UsageError(`the coordinator refused the filter: ${serverMessage(r)}`);
  const granted = (r.json as { data?: { filter?: { include_payload?: unknown } } } | undefined)?.data?.filter;
  if (r.status !== 200 || !granted)
    throw new AppError(
      r.status === 401 ? "UNAUTHORIZED" : "BAD_GATEWAY",
      `GET ${path}: HTTP ${r.status} ${serverMessage(r)}`,
    );
  if (query.has("include_payload") && granted.include_payload !== true) {
    await io.err("note: no payload: it needs an administrator and coordinator.hep_stream.allow_payload\n");
  }
}

export async function runLive(flags: ParsedFlags, given: ReadonlySet<string>, io: CliIo): Promise<number> {
  const o = liveOptions(flags, given);
  const debug = flags.debug === true;
  const client = coordinatorClient(o, io, debug);
  await preflight(client, o.query, io);
  const url = streamUrl(client, o.query);
  const rejectUnauthorized = !insecureTlsFromEnv(io.env);
  let printed = 0;
  /** Writes in order; awaited before returning, or main.ts's exit would cut the last lines. */
  let written = Promise.resolve();
  let attempt = 0;
  let stopping = false;
  let current: WebSocket | undefined;
  const onSignal = () => {
    stopping = true;
    current?.close(1000, "interrupted");
  };
  process.once("SIGINT", onSignal);
  try {
    for (;;) {
      const end = await new Promise<{ code: number; reason: string; opened: boolean }>((resolve) => {
        let opened = false;
        void client.authHeaders().then(
          (headers) => {
            const options: Bun.WebSocketOptions = url.startsWith("wss:")
              ? { headers, tls: { rejectUnauthorized } }
              : { headers };
            const ws = new BunWebSocket(url, options);
            current = ws;
            ws.onopen = () => {
              opened = true;
              attempt = 0;
            };
            ws.onmessage = (e: MessageEvent) => {
              let f: StreamFrame;
              try {
                f = JSON.parse(String(e.data)) as StreamFrame;
              } catch {
                return;
              }
              if (!o.grep.every((g) => postFilterMatches(f as unknown as Record<string, unknown>, g))) return;
              if (o.exclude.some((x) => postFilterMatches(f as unknown as Record<string, unknown>, x))) return;
              const line = `${o.json ? JSON.stringify(f) : liveLine(f)}\n`;
              written = written.then(() => io.out(line));
              if (o.count !== undefined && ++printed >= o.count) {
                stopping = true;
                ws.close(1000, "done");
              }
            };
            ws.onclose = (e: CloseEvent) => resolve({ code: e.code, reason: e.reason, opened });
          },
          (err: unknown) => resolve({ code: 0, reason: errorMessage(err), opened: false }),
        );
      });
      await written;
      if (stopping) return 0;
      // A refusal (subscriber cap) or a server error is final; a drop or a restart is retried.
      if (end.code === 1013 || end.code === 1008)
        throw new AppError("UNAVAILABLE", `the coordinator closed the stream: ${end.reason || `code ${end.code}`}`);
      const delay = Math.round(Math.min(30_000, 1000 * 2 ** Math.min(attempt, 16) * (0.8 + Math.random() * 0.4)));
      attempt++;
      await io.err(
        `-- stream ${end.opened ? "dropped" : "unreachable"} (${end.reason || `code ${end.code}`}); reconnecting in ${(delay / 1000).toFixed(1)} s: events meanwhile are not shown --\n`,
      );
      await new Promise((r) => setTimeout(r, delay));
      if (stopping) return 0;
      await preflight(client, o.query, io);
    }
  } finally {
    process.off("SIGINT", onSignal);
  }
}
