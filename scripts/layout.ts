/**
 * The multi-site layout on one machine, on loopback (docs/DEPLOY.md "The whole layout on one
 * machine"): a central svc (writer of every site's rows, with its dashboard) and N edge boxes that
 * capture HEP, keep their own lake and dashboard, and forward every packet to the central's node
 * port. Each role is `svc serve` with its own config file in its own directory, every port on
 * 127.0.0.1:0 (read back from each process's "listening" log line). Tests start it through
 * `startLayout`; run alone it prints the addresses as JSON and stops everything on Ctrl-C:
 *
 *   bun scripts/layout.ts --edges 2 [--dir /tmp/layout] [--binary dist/svc]
 *   bun scripts/layout.ts --nodes 2 --edges 1 --coordinators 2 [--postgres postgres://u:p@h:5432/db]
 *
 * With --nodes the capture nodes share one lake on a PostgreSQL DuckLake catalog (a server started
 * here through test/peers/postgres.ts, or --postgres), the edges forward to the first node, and the
 * coordinators fan reads out over the nodes, sharing one settings database, JWT secret and
 * PostgreSQL shared store (docs/DEPLOY.md "Layouts").
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Subprocess } from "bun";

const ROOT = resolve(import.meta.dir, "..");

export interface LayoutOptions {
  /** Edges with SQLite and local disk, each forwarding to the central (the first node when `nodes` > 0). */
  edges: number;
  /**
   * Capture nodes sharing one lake on a PostgreSQL DuckLake catalog, each with its own state_path
   * (docs/DUCKLAKE.md "PostgreSQL catalog"). 0 (default): one central with a SQLite lake instead.
   */
  nodes?: number;
  /** Coordinators in front of the nodes, sharing one PostgreSQL shared_store and one settings database (needs `nodes`). */
  coordinators?: number;
  /**
   * Whether each coordinator also reads the shared lake itself (default true: it reads the files and
   * asks every node for its buffer only). false: no lake of its own, so the first node of the lake
   * answers for the files and every read comes from the nodes (docs/ARCHITECTURE.md "A coordinator
   * without a lake").
   */
  coordinatorLake?: boolean;
  /**
   * The PostgreSQL of `nodes` and `coordinators`: a database URL (the lake's catalog and the
   * coordinators' shared store both live in it), or unset to start one (test/peers/postgres.ts).
   */
  postgresUrl?: string;
  /** Where each role keeps its config and state; default a new temp directory, removed by stop(). */
  dir?: string;
  /** The svc executable; default the source tree (`bun src/main.ts`). */
  binary?: string;
  /** Extra keys merged into every edge's config (e.g. forward limits). */
  edgeConfig?: Record<string, unknown>;
  /** Extra keys merged into every role's config (e.g. engine tuning for a small machine). */
  roleConfig?: Record<string, unknown>;
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
  /** Where the edges forward: the SQLite central, or the first node of the shared lake. */
  central: Role;
  edges: Role[];
  /** Capture nodes of the shared PostgreSQL-catalog lake (empty without `nodes`). */
  nodes: Role[];
  /** Coordinators over `nodes` (empty without `coordinators`). */
  coordinators: Role[];
  /** The PostgreSQL database URL of the shared lake and the shared store, when there are nodes. */
  postgresUrl?: string;
  /** The administrator's password on every role's dashboard (generated). */
  adminPassword: string;
  /** The node token of the central and of every node: the edges forward with it, the coordinators ask with it. */
  nodeToken: string;
  stop(): Promise<void>;
}

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

function config(dir: string, adminPassword: string, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    log: { level: "info", format: "json" },
    coordinator: {
      enable: true,
      http_server: { listen: "127.0.0.1:0" },
      settings_db_path: join(dir, "settings.db"),
      auth: { admin_password_hash: sha256(adminPassword) },
    },
    ingest: {
      hep: { udp: { listen: "127.0.0.1:0" }, tcp: { listen: "127.0.0.1:0" } },
    },
    storage: {
      lakehouse: { catalog_path: join(dir, "catalog.sqlite"), data_path: join(dir, "lake"), flush_interval_sec: 1 },
    },
    ...extra,
  };
}

function merge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    const isObj = (x: unknown): x is Record<string, unknown> =>
      typeof x === "object" && x !== null && !Array.isArray(x);
    out[k] = isObj(prev) && isObj(v) ? merge(prev, v) : v;
  }
  return out;
}

/** Starts one role and waits for the listeners named in `wait` to report their address. */
async function startRole(
  name: string,
  dir: string,
  cfg: Record<string, unknown>,
  binary: string | undefined,
  wait: string[],
): Promise<Role> {
  mkdirSync(dir, { recursive: true });
  const cfgPath = join(dir, "svc.json");
  writeFileSync(cfgPath, JSON.stringify(cfg, null, 2));
  const cmd = binary
    ? [binary, "serve", "--config-path", cfgPath]
    : [process.execPath, join(ROOT, "src/main.ts"), "serve", "--config-path", cfgPath];
  const child = Bun.spawn(cmd, {
    cwd: dir,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
    env: { ...process.env, NO_COLOR: "1" },
  });
  const addresses: Record<string, string> = {};
  const errors: string[] = [];
  let started = false;
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
            // The HTTP ports answer before the lake and ingest run (docs/ARCHITECTURE.md "Start-up"): a role is
            // ready once it logged "svc started".
            if (j.msg === "svc started") started = true;
            if (j.level === "error") errors.push(line);
          } catch {
            errors.push(line); // not JSON: the CLI's one-line error
          }
          if (started && wait.every((m) => addresses[m])) resolveReady();
        }
      }
      reject(new Error(`${name} exited before it listened: ${errors.slice(-3).join(" | ") || "no output"}`));
    })();
  });
  const timer = new Promise<never>((_, reject) =>
    setTimeout(
      () => reject(new Error(`${name} did not listen within 60 s (${wait.filter((m) => !addresses[m]).join(", ")})`)),
      60_000,
    ).unref(),
  );
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

/** A lake on the shared PostgreSQL catalog: one data_path for all, a state_path of the role's own (docs/DUCKLAKE.md "PostgreSQL catalog"). */
function sharedLake(roleDir: string, catalogUrl: string, dataPath: string): Record<string, unknown> {
  return {
    lakehouse: {
      catalog_type: "postgres",
      catalog_path: catalogUrl,
      data_path: dataPath,
      state_path: join(roleDir, "state"),
      flush_interval_sec: 1,
    },
  };
}

/** The PostgreSQL server of a layout with nodes: the given database, or one started here (test/peers/postgres.ts). */
async function layoutPostgres(o: LayoutOptions): Promise<{ lakeUrl: string; storeUrl: string; stop(): Promise<void> }> {
  if (o.postgresUrl) return { lakeUrl: o.postgresUrl, storeUrl: o.postgresUrl, stop: async () => {} };
  const { startPostgres } = await import("../test/peers/postgres.ts");
  const pg = await startPostgres("lake");
  try {
    return {
      lakeUrl: pg.url,
      storeUrl: await pg.createDatabase("shared_store"),
      stop: async () => await pg[Symbol.asyncDispose](),
    };
  } catch (e) {
    await pg[Symbol.asyncDispose]();
    throw e;
  }
}

export async function startLayout(o: LayoutOptions): Promise<Layout> {
  const nodeCount = o.nodes ?? 0;
  const coordinatorCount = o.coordinators ?? 0;
  if (coordinatorCount > 0 && nodeCount === 0)
    throw new Error("layout: coordinators need nodes to stand in front of (nodes >= 1)");
  const own = o.dir === undefined;
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), "svc-layout-"));
  const adminPassword = randomBytes(12).toString("base64url");
  const nodeToken = randomBytes(24).toString("base64url");
  const started: Role[] = [];
  let pg: Awaited<ReturnType<typeof layoutPostgres>> | undefined;
  const stop = async () => {
    // Reverse start order: coordinators, then edges (they stop forwarding), then the nodes or the central, then PostgreSQL.
    for (const r of [...started].reverse()) await stopRole(r);
    started.length = 0;
    await pg?.stop();
    pg = undefined;
    if (own) rmSync(dir, { recursive: true, force: true });
  };
  const role = async (name: string, cfg: Record<string, unknown>, wait: string[]) => {
    const r = await startRole(name, join(dir, name), merge(cfg, o.roleConfig ?? {}), o.binary, wait);
    started.push(r);
    return r;
  };
  try {
    const nodes: Role[] = [];
    let central: Role;
    if (nodeCount === 0) {
      central = await role(
        "central",
        config(join(dir, "central"), adminPassword, {
          node: { http_server: { listen: "127.0.0.1:0", token: nodeToken } },
        }),
        ["coordinator-http", "node-http"],
      );
    } else {
      pg = await layoutPostgres(o);
      const dataPath = `${join(dir, "shared-lake")}/`;
      for (let i = 1; i <= nodeCount; i++) {
        const nodeDir = join(dir, `node-${i}`);
        // A capture node: HEP in, the node port (searches, forward batches) out; the coordinators serve the dashboard.
        const cfg = merge(
          config(nodeDir, adminPassword, { node: { http_server: { listen: "127.0.0.1:0", token: nodeToken } } }),
          {
            coordinator: { enable: false },
            storage: sharedLake(nodeDir, pg.lakeUrl, dataPath),
          },
        );
        nodes.push(await role(`node-${i}`, cfg, ["node-http", "hep-udp"]));
      }
      central = nodes[0]!;
    }
    const edges: Role[] = [];
    for (let i = 1; i <= o.edges; i++) {
      const edgeDir = join(dir, `edge-${i}`);
      const forward = {
        ingest: { forward: { enable: true, url: central.url("node-http"), token: nodeToken, timeout_sec: 5 } },
      };
      const cfg = merge(
        merge(config(edgeDir, adminPassword, { node: { http_server: { listen: "127.0.0.1:0" } } }), forward),
        o.edgeConfig ?? {},
      );
      edges.push(await role(`edge-${i}`, cfg, ["coordinator-http", "node-http", "hep-udp"]));
    }
    const coordinators: Role[] = [];
    if (coordinatorCount > 0 && pg) {
      // Replicas share what a request landing on any of them needs (docs/AUTH.md "Several coordinators"):
      // the JWT secret, the PostgreSQL shared store, and (one host) one settings database with the users.
      const settingsDir = join(dir, "coordinators");
      const jwtSecret = randomBytes(48).toString("base64url");
      for (let i = 1; i <= coordinatorCount; i++) {
        const cDir = join(dir, `coordinator-${i}`);
        const cfg = merge(config(settingsDir, adminPassword, { node: { http_server: { listen: "127.0.0.1:0" } } }), {
          coordinator: {
            nodes: nodes.map((n) => ({ name: n.name, url: n.url("node-http"), token: nodeToken })),
            replicas: coordinatorCount,
            shared_store: { url: pg.storeUrl },
            jwt: { secret: jwtSecret },
          },
          // No capture: the coordinator reads the shared lake's files itself and asks each node for its
          // buffer only (docs/ARCHITECTURE.md "Coordinator over several nodes", "Shared lakes").
          ingest: { hep: { enable: false } },
          storage:
            o.coordinatorLake === false
              ? { lakehouse: { enable: false } }
              : sharedLake(cDir, pg.lakeUrl, `${join(dir, "shared-lake")}/`),
        });
        coordinators.push(await role(`coordinator-${i}`, cfg, ["coordinator-http"]));
      }
    }
    return {
      central,
      edges,
      nodes,
      coordinators,
      ...(pg ? { postgresUrl: pg.lakeUrl } : {}),
      adminPassword,
      nodeToken,
      stop,
      [Symbol.asyncDispose]: stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** `--name` as a whole number in [min, 32], or the exit with a one-line message. */
function count(values: Record<string, unknown>, name: string, min: number): number {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < min || n > 32) {
    console.error(`layout: --${name} must be a whole number from ${min} to 32`);
    process.exit(2);
  }
  return n;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      edges: { type: "string", default: "2" },
      nodes: { type: "string", default: "0" },
      coordinators: { type: "string", default: "0" },
      postgres: { type: "string" },
      dir: { type: "string" },
      binary: { type: "string" },
    },
  });
  const [edges, nodes, coordinators] = [
    count(values, "edges", 0),
    count(values, "nodes", 0),
    count(values, "coordinators", 0),
  ];
  if (coordinators > 0 && nodes === 0) {
    console.error("layout: --coordinators needs --nodes 1 or more");
    process.exit(2);
  }
  const layout = await startLayout({
    edges,
    nodes,
    coordinators,
    ...(values.postgres ? { postgresUrl: values.postgres } : {}),
    ...(values.dir ? { dir: resolve(values.dir) } : {}),
    ...(values.binary ? { binary: resolve(values.binary) } : {}),
  });
  const show = (r: Role) => ({
    name: r.name,
    dir: r.dir,
    ...(r.addresses["coordinator-http"] ? { dashboard: r.url("coordinator-http") } : {}),
    ...(r.addresses["node-http"] ? { node: r.url("node-http") } : {}),
    ...(r.addresses["hep-udp"] ? { hep_udp: r.addresses["hep-udp"], hep_tcp: r.addresses["hep-tcp"] } : {}),
  });
  const out = {
    admin_user: "admin",
    admin_password: layout.adminPassword,
    central: show(layout.central),
    edges: layout.edges.map(show),
    ...(nodes > 0 ? { nodes: layout.nodes.map(show), coordinators: layout.coordinators.map(show) } : {}),
  };
  console.log(JSON.stringify(out, null, 2));
  console.error("layout: running; Ctrl-C stops every role");
  const done = async () => {
    await layout.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void done());
  process.on("SIGTERM", () => void done());
}
