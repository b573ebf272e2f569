/**
 * Running the terminal clients as real processes (`bun src/main.ts search|agent …`) with a HOME of
 * their own (the token cache lives there) and no SVC_* settings from the caller, plus readers for
 * what they print (RFC 4180 CSV, the callflow ladder) that share no code with the writers.
 */
import { resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "../..");

export interface CliRun {
  stdout: string;
  stderr: string;
  code: number;
}

/** The caller's environment without SVC_* or a library path, with HOME and a fixed terminal width. */
export function cliEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith("SVC_") || k === "LD_LIBRARY_PATH" || k === "LD_PRELOAD" || k === "COLUMNS")
      continue;
    env[k] = v;
  }
  return { ...env, HOME: home, COLUMNS: "160", ...extra };
}

/** `stdin`: text piped to the command (default: none). */
export async function runCli(args: string[], env: Record<string, string>, stdin?: string): Promise<CliRun> {
  const input = stdin === undefined ? "ignore" : new TextEncoder().encode(stdin);
  const proc = Bun.spawn([process.execPath, "src/main.ts", ...args], {
    cwd: ROOT,
    env,
    stdin: input,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { stdout, stderr, code };
}

/** RFC 4180 reader: records of fields, quoted fields may hold commas, quotes ("") and line breaks. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = "";
  let rec: string[] = [];
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (c === '"') {
        quoted = false;
        i++;
      } else {
        field += c;
        i++;
      }
      continue;
    }
    if (c === '"' && field === "") {
      quoted = true;
      i++;
    } else if (c === ",") {
      rec.push(field);
      field = "";
      i++;
    } else if (c === "\r" && text[i + 1] === "\n") {
      rec.push(field);
      records.push(rec);
      rec = [];
      field = "";
      i += 2;
    } else if (c === "\n" || c === "\r") {
      throw new Error(`bare line break outside quotes at ${i}: records must end with CRLF`);
    } else {
      field += c;
      i++;
    }
  }
  if (field !== "" || rec.length) throw new Error("last record not ended by CRLF");
  return records;
}

export interface LadderArrow {
  time: string;
  from: string;
  to: string;
  label: string;
}

/**
 * Reads the arrows of a callflow ladder back: the endpoint header gives each lifeline's column,
 * an arrow line spans two lifelines with `─` and has its head (`>` or `<`) at the receiver.
 */
export function parseLadder(text: string): { endpoints: string[]; arrows: LadderArrow[] } {
  const lines = text.split("\n");
  const lifeline = lines.find((l) => l.includes("│") && l.trim().replace(/[│ ]/g, "") === "");
  if (lifeline === undefined) return { endpoints: [], arrows: [] }; // no rows: no lifelines
  const centres = [...lifeline].flatMap((ch, i) => (ch === "│" ? [i] : []));
  const headerIdx = lines.indexOf(lifeline) - 1;
  // The header line sits above the lifelines (an alias line may come between).
  const header = lines
    .slice(0, headerIdx + 1)
    .reverse()
    .find((l) => /\d/.test(l))!;
  const endpoints = centres.map((c) => {
    const left = header.lastIndexOf(" ", c) + 1;
    const right = header.indexOf(" ", c);
    return header.slice(left, right === -1 ? undefined : right);
  });
  const arrows: LadderArrow[] = [];
  for (const l of lines) {
    const m = /^(\d\d:\d\d:\d\d\.\d{6}|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6})/.exec(l);
    if (!m) continue;
    const cps = [...l];
    const s = cps.findIndex((ch, i) => i > m[1]!.length && (ch === "─" || ch === "<"));
    let e = cps.length - 1;
    while (e > s && cps[e] !== "─" && cps[e] !== ">") e--;
    const lo = centres.indexOf(s - 1);
    const hi = centres.indexOf(e + 1);
    const label = cps
      .slice(s, e + 1)
      .join("")
      .replace(/^[<─]+|[─>]+$/g, "")
      .trim();
    if (lo === -1) throw new Error(`arrow does not start at a lifeline: ${l}`);
    if (hi === -1) {
      // A message to itself: `│──┐ label` on this line.
      arrows.push({ time: m[1]!, from: endpoints[lo]!, to: endpoints[lo]!, label: l.slice(l.indexOf("┐") + 1).trim() });
      continue;
    }
    const right = cps[e] === ">";
    arrows.push({ time: m[1]!, from: endpoints[right ? lo : hi]!, to: endpoints[right ? hi : lo]!, label });
  }
  return { endpoints, arrows };
}

export interface FakeAgent extends AsyncDisposable {
  url: string;
  /** Requests per path. */
  hits: Map<string, number>;
  set(o: { connected?: boolean; stats?: Record<string, unknown> }): void;
}

/** A capture agent's GET /api/stats in the documented shape (heplify docs/API.md field names). */
export const AGENT_STATS = {
  node_name: "edge-agent-1",
  node_id: 2001,
  uuid: "550e8400-e29b-41d4-a716-446655440000",
  interfaces: ["eth0", "any"],
  capture_modes: { eth0: ["SIP", "RTCP"] },
  uptime_seconds: 3725,
  uptime: "1h2m5s",
  packets: {
    total: 1500,
    sip: 1200,
    rtcp: 100,
    rtcp_fail: 10,
    rtp: 0,
    dns: 5,
    log: 0,
    hep_sent: 1300,
    duplicates: 5,
    unknown: 180,
  },
  transport: [
    { addr: "homer.example.com:9060", proto: "tcp", connected: true, reconnects: 0, sent: 1300, errors: 0 },
    { addr: "10.9.9.9:9060", proto: "udp", connected: false, reconnects: 3, sent: 0, errors: 17 },
  ],
};

/** The agent API on 127.0.0.1:0; `/api/stats` wants Basic agent:secret when `auth` is set. */
export function fakeAgent(auth?: { user: string; pass: string }): FakeAgent {
  let connected = true;
  let stats: Record<string, unknown> = AGENT_STATS;
  const hits = new Map<string, number>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      const n = (hits.get(path) ?? 0) + 1;
      hits.set(path, n);
      if (path === "/health") {
        return Response.json({
          status: connected ? "ok" : "degraded",
          connected_transports: connected ? 1 : 0,
          queue_size: 4,
          buffer_size_bytes: connected ? 0 : 65536,
        });
      }
      if (path === "/api/stats") {
        if (auth && req.headers.get("authorization") !== `Basic ${btoa(`${auth.user}:${auth.pass}`)}`) {
          return new Response("Unauthorized\n", {
            status: 401,
            headers: { "www-authenticate": 'Basic realm="heplify"' },
          });
        }
        // Counters move between polls, so a redraw is visible.
        const p = (stats.packets ?? {}) as Record<string, number>;
        return new Response(JSON.stringify({ ...stats, packets: { ...p, total: (p.total ?? 0) + n - 1 } }), {
          headers: { "content-type": "application/json" },
        });
      }
      return new Response("not found", { status: 404 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    hits,
    set(o) {
      if (o.connected !== undefined) connected = o.connected;
      if (o.stats) stats = o.stats;
    },
    async [Symbol.asyncDispose]() {
      await server.stop(true);
    },
  };
}
