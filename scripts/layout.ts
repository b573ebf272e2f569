/**
 * The multi-site layout on one machine, on loopback (docs/DEPLOY.md "The whole layout on one
 * machine"): a central svc (writer of every site's rows, with its dashboard) and N edge boxes that
 * capture HEP, keep their own lake and dashboard, and forward every packet to the central's node
 * port. Each role is `svc serve` with its own config file in its own directory, every port on
 * 127.0.0.1:0 (read back from each process's "listening" log line). Tests start it through
 * `startLayout`; run alone it prints the addresses as JSON and stops everything on Ctrl-C:
 *
 *   bun scripts/layout.ts --edges 2 [--dir /tmp/layout] [--binary dist/svc]
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Subprocess } from "bun";

const ROOT = resolve(import.meta.dir, "..");

export interface LayoutOptions {
  edges: number;
  /** Where each role keeps its config and state; default a new temp directory, removed by stop(). */
  dir?: string;
  /** The svc executable; default the source tree (`bun src/main.ts`). */
  binary?: string;
  /** Extra keys merged into every edge's config (e.g. forward limits). */
  edgeConfig?: Record<string, unknown>;
}

export interface Role {
  name: string;
  dir: string;
  process: Subprocess<"ignore", "ignore", "pipe">;
  /** Module → `host:port` of its listener ("coordinator-http", "node-http", "hep-udp", "hep-tcp"). */
  addresses: Record<string, string>;
  url(module: "coordinator-http" | "node-http"): string;
  port(module: string): number;
}

export interface Layout extends AsyncDisposable {
  central: Role;
  edges: Role[];
  /** The administrator's password on every role's dashboard (generated). */
  adminPassword: string;
  /** The central's node token, which every edge forwards with. */
  nodeToken: string;
  stop(): Promise<void>;
}

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

function config(dir: string, adminPassword: string, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    log: { level: "info", format: "json" },
    coordinator: { enable: true, http_server: { listen: "127.0.0.1:0" }, settings_db_path: join(dir, "settings.db"), auth: { admin_password_hash: sha256(adminPassword) } },
    ingest: {
      hep: { udp: { listen: "127.0.0.1:0" }, tcp: { listen: "127.0.0.1:0" } },
    },
    storage: { lakehouse: { catalog_path: join(dir, "catalog.sqlite"), data_path: join(dir, "lake"), flush_interval_sec: 1 } },
    ...extra,
  };
}

function merge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    const isObj = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);
    out[k] = isObj(prev) && isObj(v) ? merge(prev, v) : v;
  }
  return out;
}

/** Starts one role and waits for the listeners named in `wait` to report their address. */
async function startRole(name: string, dir: string, cfg: Record<string, unknown>, binary: string | undefined, wait: string[]): Promise<Role> {
  mkdirSync(dir, { recursive: true });
  const cfgPath = join(dir, "svc.json");
  writeFileSync(cfgPath, JSON.stringify(cfg, null, 2));
  const cmd = binary ? [binary, "serve", "--config-path", cfgPath] : [process.execPath, join(ROOT, "src/main.ts"), "serve", "--config-path", cfgPath];
  const child = Bun.spawn(cmd, { cwd: dir, stdin: "ignore", stdout: "ignore", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
  const addresses: Record<string, string> = {};
  const errors: string[] = [];
  let exited = false;
  void child.exited.then(() => (exited = true));
  const ready = new Promise<void>((resolveReady, reject) => {
    void (async () => {
      const dec = new TextDecoder();
      let pending = "";
      const r = child.stderr.getReader();
      for (let c = await r.read(); !c.done; c = await r.read()) {
        pending += dec.decode(c.value, { stream: true });
        for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          try {
            const j = JSON.parse(line) as { msg?: string; module?: string; address?: string; level?: string };
            if (j.msg === "listening" && j.module && j.address) addresses[j.module] = j.address;
            if (j.level === "error") errors.push(line);
          } catch {
            errors.push(line); // not JSON: the CLI's one-line error
          }
          if (wait.every((m) => addresses[m])) resolveReady();
        }
      }
      reject(new Error(`${name} exited before it listened: ${errors.slice(-3).join(" | ") || "no output"}`));
    })();
  });
  const timer = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${name} did not listen within 60 s (${wait.filter((m) => !addresses[m]).join(", ")})`)), 60_000).unref());
  try {
    await Promise.race([ready, timer]);
  } catch (e) {
    if (!exited) child.kill("SIGKILL");
    throw e;
  }
  const base = (m: string) => `http://${addresses[m]}`;
  return { name, dir, process: child, addresses, url: base, port: (m) => Number(addresses[m]?.split(":").pop()) };
}

async function stopRole(r: Role): Promise<void> {
  r.process.kill("SIGTERM");
  const killed = setTimeout(() => r.process.kill("SIGKILL"), 30_000);
  await r.process.exited;
  clearTimeout(killed);
}

export async function startLayout(o: LayoutOptions): Promise<Layout> {
  const own = o.dir === undefined;
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), "svc-layout-"));
  const adminPassword = randomBytes(12).toString("base64url");
  const nodeToken = randomBytes(24).toString("base64url");
  const started: Role[] = [];
  const stop = async () => {
    // Edges first: they stop forwarding before the central goes away.
    for (const r of [...started].reverse()) await stopRole(r);
    started.length = 0;
    if (own) rmSync(dir, { recursive: true, force: true });
  };
  try {
    const central = await startRole("central", join(dir, "central"), config(join(dir, "central"), adminPassword, { node: { http_server: { listen: "127.0.0.1:0", token: nodeToken } } }), o.binary, [
      "coordinator-http",
      "node-http",
    ]);
    started.push(central);
    const edges: Role[] = [];
    for (let i = 1; i <= o.edges; i++) {
      const edgeDir = join(dir, `edge-${i}`);
      const forward = { ingest: { forward: { enable: true, url: central.url("node-http"), token: nodeToken, timeout_sec: 5 } } };
      const cfg = merge(merge(config(edgeDir, adminPassword, { node: { http_server: { listen: "127.0.0.1:0" } } }), forward), o.edgeConfig ?? {});
      const edge = await startRole(`edge-${i}`, edgeDir, cfg, o.binary, ["coordinator-http", "node-http", "hep-udp"]);
      started.push(edge);
      edges.push(edge);
    }
    return { central, edges, adminPassword, nodeToken, stop, [Symbol.asyncDispose]: stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { edges: { type: "string", default: "2" }, dir: { type: "string" }, binary: { type: "string" } } });
  const edges = Number(values.edges);
  if (!Number.isInteger(edges) || edges < 1 || edges > 32) {
    console.error("layout: --edges must be a whole number from 1 to 32");
    process.exit(2);
  }
  const layout = await startLayout({ edges, ...(values.dir ? { dir: resolve(values.dir) } : {}), ...(values.binary ? { binary: resolve(values.binary) } : {}) });
  const show = (r: Role) => ({ name: r.name, dir: r.dir, dashboard: r.url("coordinator-http"), node: r.url("node-http"), hep_udp: r.addresses["hep-udp"], hep_tcp: r.addresses["hep-tcp"] });
  console.log(JSON.stringify({ admin_user: "admin", admin_password: layout.adminPassword, central: show(layout.central), edges: layout.edges.map(show) }, null, 2));
  console.error("layout: running; Ctrl-C stops every role");
  const done = async () => {
    await layout.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void done());
  process.on("SIGTERM", () => void done());
}
