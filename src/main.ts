/**
 * Composition root: argv → config → modules → start / stop (reverse order). The commands of
 * src/cli/ return their exit code; only this file and the executable's entry (src/bin.ts) call
 * process.exit. Over 400 lines: every module of `svc serve` is built, ordered and split into the
 * two start phases (docs/ARCHITECTURE.md "Start-up") here, in one place, next to the commands.
 */
import {
  checkConfigEffects,
  configWarnings,
  engineTuning,
  hepThreadCount,
  loadConfig,
  type Config,
} from "./config/index.ts";
import {
  AppError,
  GIT_REVISION,
  MetricsRegistry,
  StartupState,
  VERSION,
  configureLogging,
  createLogger,
  errorMessage,
  registerProcessMetrics,
  startInPhases,
  type Logger,
  type Module,
} from "./core/index.ts";
import { createHttpModule, HealthMonitor, type HttpModule, type LineProtocolSync } from "./api/index.ts";
import { resetAdminPassword, type FirstRunAdmin } from "./auth/index.ts";
import { clusterNodes, EnrollAnnouncer, loadEnrollmentToken, loadNodeIdentity, StreamHub } from "./cluster/index.ts";
import { checkStreamConfig, createLiveStream } from "./stream/index.ts";
import {
  adoptHepTables,
  adoptOtlpTables,
  createHepIngest,
  createLineProtocolReceiver,
  createThreadedHepIngest,
  loadOtlp,
  type HepIngest,
  type LineProtocolReceiver,
  type OtlpReceiver,
} from "./ingest/index.ts";
import { beforeDuckDbLoads, Lake } from "./lake/index.ts";
import { runMcpStdio } from "./mcp/index.ts";
import { agentsFeed, createCoordinator } from "./coordinator.ts";
import { createNodePort } from "./node-port.ts";
import { createRelay } from "./relay.ts";

export { createCoordinator } from "./coordinator.ts";
import {
  UsageError,
  formatHelp,
  parseArgs,
  processIo,
  runAgent,
  runCatalog,
  runResetAdminPassword,
  runSearch,
  runShowConfig,
  runSystem,
  writeFirstRunBanner,
  type FlagSpec,
} from "./cli/index.ts";

const GLOBAL_FLAGS: FlagSpec[] = [
  { name: "config-path", type: "string", description: "JSON configuration file (keys of `svc show-config`)" },
  { name: "help", alias: "h", type: "boolean", description: "show help" },
];

const SERVE_FLAGS: FlagSpec[] = [
  ...GLOBAL_FLAGS,
  {
    name: "reset-admin-password",
    type: "boolean",
    description: "write coordinator.auth.admin_password_hash for admin_user into the settings database, then exit",
  },
];

/**
 * The commands, each declared once: its name, its line in `svc help`, and what runs it (`rest`: the
 * arguments after the name). Terminal clients print their own output and return the exit code.
 */
interface Command {
  name: string;
  summary: string;
  run(rest: string[], logger: Logger): Promise<number> | number;
}

const COMMANDS: readonly Command[] = [
  {
    name: "serve",
    summary: "run the appliance (API, dashboard, HEP listeners, lake writer, compactor)",
    run: runServe,
  },
  {
    name: "show-config",
    summary: "print the effective configuration, secrets masked",
    run: (rest) => runShowConfig(rest, GLOBAL_FLAGS),
  },
  {
    name: "search",
    summary: "search a coordinator from the terminal (table, csv, json, chart, callflow, pcap, --interactive)",
    run: (rest) => runSearch(rest, processIo()),
  },
  {
    name: "agent",
    summary: "capture-agent statistics and health (stats, health, watch)",
    run: (rest) => runAgent(rest, processIo()),
  },
  {
    name: "mcp",
    summary: "natural-language tool server for language-model clients (MCP over stdio; needs mcp.svc_token)",
    run: runMcp,
  },
  {
    name: "reset-admin-password",
    summary: "give the administrator a new password (printed) in the settings database",
    run: (rest) => runResetAdminPassword(rest, processIo()),
  },
  {
    name: "catalog",
    summary: "lake catalog backups: backup (online), list, restore (appliance stopped)",
    run: (rest) => runCatalog(rest, processIo()),
  },
  {
    name: "system",
    summary: "--rebuild-catalog: a new lake catalog from the Parquet files (appliance stopped)",
    run: (rest) => runSystem(rest, processIo()),
  },
  // Loaded only for its command: `svc serve` starts without it (docs/ARCHITECTURE.md "Start-up").
  {
    name: "loadgen",
    summary: "SIP load generator, sipp-style flags and run profiles (also as a link named loadgen; docs/LOADGEN.md)",
    run: async (rest) => (await import("./loadgen/index.ts")).runLoadgen(rest),
  },
  { name: "version", summary: "print version and git revision (also --version)", run: runVersion },
];

const HELP = formatHelp(
  "svc [command] [options]",
  "svc: VoIP capture and troubleshooting appliance.",
  GLOBAL_FLAGS,
  COMMANDS.map((c) => [c.name, c.summary] as [string, string]),
);

export interface RunningApp {
  config: Config;
  logger: Logger;
  metrics: MetricsRegistry;
  modules: Module[];
  lake?: Lake;
  ingest?: HepIngest;
  /** Base URL of the coordinator API when enabled. */
  coordinatorUrl?: string;
  /** Base URL of the node API (metadata, HEP over HTTP). */
  nodeUrl?: string;
  /** Line-protocol receiver (`ingest.line_protocol.enable` with the lake); its `url()` is the bound address. */
  lineProtocol?: LineProtocolReceiver;
  /** OTLP receiver (`ingest.otlp.enable` with the lake). */
  otlp?: OtlpReceiver;
  /** Line-protocol mapping sync of the coordinator (runs every 60 s; `syncNow()` for tests). */
  lineProtocolSync?: LineProtocolSync;
  /** The forward log and live mirror (ingest.forward, ingest.mirror; docs/DEPLOY.md). */
  relay?: ReturnType<typeof createRelay>;
  /** The edge's enrolment announcements (node.enroll; docs/DEPLOY.md "Finding the edges"). */
  enroll?: EnrollAnnouncer;
  /** The two-phase start (docs/ARCHITECTURE.md "Start-up"); `startup.whenReady()` settles once the lake and ingest have started. */
  startup: StartupState;
  stop(): Promise<boolean>;
}

/**
 * Builds every module from its config slice. The list order is the dependency order: lake → HEP
 * pipeline → HEP listeners → line-protocol receiver → node HTTP → coordinator HTTP; stop runs in
 * reverse: HTTP and listeners stop accepting, then the lake flushes every buffered row and closes.
 * The start runs in two phases (docs/ARCHITECTURE.md "Start-up"): the HTTP ports, /health, the
 * settings database and the logins first, then the lake and everything that needs it.
 */
export interface StartOptions {
  /**
   * Receives the administrator password the bootstrap generated (first start only), also when a
   * later module fails to start: `svc serve` prints it in the first-run banner either way.
   */
  onFirstRunAdmin?: (admin: FirstRunAdmin) => void;
  /** Receives the node token the first start generated (node.http_server.token empty, node port beyond loopback). */
  onFirstRunNodeToken?: (t: { token: string; path: string }) => void;
  /**
   * Return once the HTTP listeners, the settings database and the logins have started, the lake,
   * the ingest and what needs the lake still starting in the background (`svc serve`; docs/ARCHITECTURE.md
   * "Start-up"). Without it (tests, benches) the promise settles once everything has started.
   */
  background?: boolean;
  /** The lake's start waits for this promise before it opens the catalog (tests of the start-up phases). */
  holdLake?: Promise<void>;
}

export async function startAppliance(config: Config, logger: Logger, opts: StartOptions = {}): Promise<RunningApp> {
  const startup = new StartupState();
  const metrics = new MetricsRegistry();
  registerProcessMetrics(metrics, VERSION);
  const modules: Module[] = [];
  const running: Partial<RunningApp> = {};

  // Keys that would do nothing are refused with the reason (docs/OPERATIONS.md); one engine serves storage and node tuning.
  checkConfigEffects(config);
  for (const w of configWarnings(config)) logger.warn(w);
  const lake = config.storage.lakehouse.enable
    ? new Lake({
        config: { ...config.storage.lakehouse, tuning: engineTuning(config) },
        logger,
        metrics,
        onStartStep: (step) => startup.step(step),
        ...(opts.holdLake ? { holdStart: opts.holdLake } : {}),
        // Resolved here, at the top of src/, so the executable finds its bundled copy (scripts/build.ts).
        repageWorker: new URL("./core/parquet/repage-worker.ts", import.meta.url),
        pageWorker: new URL("./lake/page-worker.ts", import.meta.url),
      })
    : undefined;
  if (lake) modules.push(lake);

  const hasIngest = Boolean(lake && config.ingest.hep.enable);
  checkStreamConfig(config, hasIngest);
  // The live-stream broker (docs/STREAM.md): for the node's /stream and for the coordinator's in-process source.
  const hepThreads = hepThreadCount(config.ingest.hep.threads, undefined, config.storage.lakehouse.spool_format);
  const live =
    hasIngest &&
    (config.ingest.hep_stream.enable || (config.coordinator.enable && config.coordinator.hep_stream.enable))
      ? createLiveStream(config.ingest.hep_stream, metrics, {
          allowPayload: config.coordinator.enable && config.coordinator.hep_stream.allow_payload,
          hepThreads,
        })
      : undefined;
  // The forward log and the mirror (docs/DEPLOY.md): started before the listeners, stopped after them.
  const relay = createRelay(config, lake, logger, metrics);
  if (relay) modules.push(relay);
  const ingest =
    lake && config.ingest.hep.enable
      ? hepThreads > 0
        ? createThreadedHepIngest(config.ingest, lake, config.storage.lakehouse.max_buffered_rows, logger, metrics, {
            // Resolved here, at the top of src/, so the executable finds its bundled copy (scripts/build.ts).
            entry: new URL("./ingest/thread/worker.ts", import.meta.url),
            count: hepThreads,
            spoolFormat: config.storage.lakehouse.spool_format,
            logLevel: config.log.level,
            ...(live ? { stream: live.feed } : {}),
            ...(relay?.takesHep() ? { raw: relay } : {}),
          })
        : createHepIngest(config.ingest, lake, logger, metrics)
      : undefined;
  if (ingest) modules.push(...ingest.modules);
  // HEP off: the HEP tables the catalog has stay searchable (src/ingest/hep/adopt.ts).
  const adoptHep = !ingest && lake ? adoptHepTables(lake, logger) : undefined;
  if (adoptHep) modules.push(adoptHep);
  if (ingest && relay?.takesHep()) ingest.pipeline.raw = (p) => relay.acceptPacket(p);

  // /health on both HTTP ports and the line-protocol receiver: writer, rows lost, free space, ingest thread (src/api/health.ts).
  const thread = ingest?.thread;
  const health = new HealthMonitor({
    metrics,
    startup,
    ...(lake
      ? {
          writer: () => lake.writerHealth(),
          maintainer: () => lake.maintainerState(),
          objectStore: () => lake.remoteFiles()?.store.location,
          storage: {
            dirs: () => lake.storageDirs(),
            minFreeBytes: config.storage.lakehouse.min_free_bytes,
            reserveFreeBytes: config.storage.lakehouse.reserve_free_bytes,
          },
        }
      : {}),
    // Not before the threads have started: a thread not yet heard from would read as stuck.
    ...(thread ? { ingestThreads: () => (startup.ready ? thread.states() : undefined) } : {}),
    ...(relay && config.ingest.forward.enable ? { forward: () => relay.health() } : {}),
  });
  modules.push(health);
  const healthReport = () => health.report();

  // Accepted line-protocol and OTLP requests go to the forward log too (docs/DEPLOY.md "Forward log").
  const forwarding = relay && config.ingest.forward.enable ? relay : undefined;
  // Line protocol only with the writer in this process (docs/LINE-PROTOCOL.md); after HEP, which defines its tables first.
  const lineProtocol =
    lake && config.ingest.line_protocol.enable
      ? createLineProtocolReceiver(config.ingest.line_protocol, lake, logger, metrics, {
          maxBufferedRows: config.storage.lakehouse.max_buffered_rows,
          health: healthReport,
          ...(forwarding ? { onWritten: (r) => forwarding.acceptLineProtocol(r) } : {}),
        })
      : undefined;
  if (lineProtocol) modules.push(lineProtocol);
  // OTLP (docs/OTLP.md): like line protocol, only with the writer in this process.
  const otlp =
    lake && config.ingest.otlp.enable
      ? (await loadOtlp()).createOtlpReceiver(config.ingest.otlp, lake, logger, metrics, {
          maxBufferedRows: config.storage.lakehouse.max_buffered_rows,
          ...(forwarding
            ? { onWritten: (signal, body, encoding, nowUs) => forwarding.acceptOtlp({ signal, encoding, nowUs, body }) }
            : {}),
        })
      : undefined;
  if (otlp) modules.push(otlp);
  const adoptOtlp = !otlp && lake ? adoptOtlpTables(lake, logger) : undefined;
  if (adoptOtlp) modules.push(adoptOtlp);

  // Node and lake identity, and the node token (docs/ARCHITECTURE.md "Node identity", "Node authentication").
  const identity = lake ? loadNodeIdentity(config) : undefined;
  if (identity?.generatedToken) opts.onFirstRunNodeToken?.(identity.generatedToken);
  const nodeHttp =
    lake || ingest
      ? createNodePort(config, { lake, ingest, identity, live, health: healthReport, startup }, logger, metrics)
      : undefined;
  if (nodeHttp) modules.push(nodeHttp);
  // The edge announces its node port to a coordinator (docs/DEPLOY.md "Finding the edges").
  const enroll =
    nodeHttp && config.node.enroll.enable
      ? new EnrollAnnouncer(
          config.node.enroll,
          { listen: config.node.http_server.listen, url: () => nodeHttp.url(), token: identity?.token },
          logger,
        )
      : undefined;
  if (enroll) modules.push(enroll);

  let coordinatorHttp: HttpModule | undefined;
  let lineProtocolSync: LineProtocolSync | undefined;
  let coordinatorAuth: ReturnType<typeof createCoordinator>["auth"] | undefined;
  let coordinatorLakeModules: Module[] = [];
  if (config.coordinator.enable) {
    const hs = config.coordinator.hep_stream;
    // coordinator.nodes with coordinator.hep_stream.nodes folded in (docs/ARCHITECTURE.md "Coordinator over several nodes").
    const nodes = clusterNodes(config.coordinator, logger);
    const hub = hs.enable
      ? new StreamHub({
          ...(live ? { broker: live.broker } : {}),
          nodes,
          fanOutTimeoutMs: hs.fan_out_timeout_ms,
          queueLen: config.ingest.hep_stream.per_sub_queue_len,
          limits: config.ingest.hep_stream,
          metrics,
          logger,
        })
      : undefined;
    const coordinator = createCoordinator(config, logger, metrics, lake, ingest?.pipeline, healthReport, hub, {
      nodes,
      ...(identity ? { self: identity } : {}),
      startup,
      // Configured, or generated and kept beside the settings database; never logged (docs/DEPLOY.md "Finding the edges").
      ...(config.coordinator.enrollment.enable ? { enrollmentToken: loadEnrollmentToken(config).token } : {}),
    });
    coordinatorLakeModules = [...coordinator.lakeModules];
    coordinatorAuth = coordinator.auth;
    lineProtocolSync = coordinator.lineProtocolSync;
    modules.push(...coordinator.modules);
    if (ingest) {
      const feed = agentsFeed(ingest, coordinator.settings, logger);
      modules.push(feed);
      coordinatorLakeModules.push(feed);
    }
    coordinatorHttp = createHttpModule(
      coordinator.app,
      {
        name: "coordinator-http",
        listen: config.coordinator.http_server.listen,
        listenKey: "coordinator.http_server.listen",
        reusePort: config.coordinator.http_server.reuse_port,
        reusePortKey: "coordinator.http_server.reuse_port",
        idleTimeoutSec: Math.max(
          config.coordinator.http_server.read_timeout,
          config.coordinator.http_server.write_timeout,
        ),
        maxBodyBytes: config.coordinator.http_server.max_body_bytes,
      },
      logger,
    );
    modules.push(coordinatorHttp);
    // Stops before the listener: its clients are told the server goes away.
    if (hub) modules.push(hub);
  }
  // Last to start, first to stop: subscribers are told the server goes away before the listeners close.
  const liveModule = live && ingest ? live.module(ingest.pipeline) : undefined;
  if (liveModule) modules.push(liveModule);

  // Started first, answering at once (docs/ARCHITECTURE.md "Start-up"): the HTTP listeners (their
  // lake routes answer 503 STARTING until the rest has started), /health, the settings database,
  // the logins, the games and the live-stream hub. The rest (the lake, the relay, the ingest and
  // its listeners, what reads or writes the lake) starts after them in list order; stopping runs
  // in reverse list order whatever the phase, as before.
  const later = new Set<Module | undefined>([
    lake,
    relay,
    ...(ingest?.modules ?? []),
    adoptHep,
    lineProtocol,
    otlp,
    adoptOtlp,
    ...coordinatorLakeModules,
    liveModule,
  ]);
  const first = new Set(modules.filter((m) => !later.has(m)));
  let phases: Awaited<ReturnType<typeof startInPhases>>;
  try {
    phases = await startInPhases(modules, first, startup, logger);
    // Once everything has started, the newest files' footers go into the lookup indexes
    // (docs/ARCHITECTURE.md "Lookups by page"): the first searches after a restart stay fast.
    if (lake)
      void startup.whenReady().then(
        () =>
          lake.warmLookups().then(
            (files) => logger.info("lookup indexes warmed", { files }),
            (e) => logger.warn("lookup index warm-up failed", { error: e }),
          ),
        () => undefined,
      );
    if (!opts.background) await startup.whenReady();
  } finally {
    const admin = coordinatorAuth?.takeFirstRunAdmin();
    if (admin) opts.onFirstRunAdmin?.(admin);
  }
  Object.assign(running, {
    config,
    logger,
    metrics,
    modules,
    ...(lake ? { lake } : {}),
    ...(ingest ? { ingest } : {}),
    ...(coordinatorHttp ? { coordinatorUrl: coordinatorHttp.url() } : {}),
    ...(nodeHttp ? { nodeUrl: nodeHttp.url() } : {}),
    ...(lineProtocol ? { lineProtocol } : {}),
    ...(otlp ? { otlp } : {}),
    ...(lineProtocolSync ? { lineProtocolSync } : {}),
    ...(relay ? { relay } : {}),
    ...(enroll ? { enroll } : {}),
    startup,
    stop: () => phases.stop(),
  });
  return running as RunningApp;
}

async function serve(config: Config, logger: Logger, configPath: string | undefined): Promise<number> {
  // Signals are handled from the first moment: a SIGTERM during start-up lets the module starting
  // now finish, starts nothing more, then stops cleanly (flushing whatever was accepted meanwhile).
  let signalled: string | undefined;
  let wake: (() => void) | undefined;
  const onSignal = (signal: string) => {
    if (signalled) {
      logger.warn("second signal: exiting at once", { signal });
      process.exit(1);
    }
    signalled = signal;
    wake?.();
  };
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));
  let admin: FirstRunAdmin | undefined;
  let app: RunningApp;
  try {
    // Returns once the HTTP listeners answer; the lake and the ingest start behind them
    // (docs/ARCHITECTURE.md "Start-up").
    app = await startAppliance(config, logger, {
      background: true,
      onFirstRunAdmin: (a) => (admin = a),
      // Shown once, like the first administrator's password (docs/ARCHITECTURE.md "Node authentication").
      onFirstRunNodeToken: (t) =>
        process.stderr.write(
          `\nsvc first start: node token for coordinator.nodes[].token (kept in ${t.path}):\n   ${t.token}\n\n`,
        ),
    });
  } catch (e) {
    if (admin) writeFirstRunBanner(admin, config, configPath, undefined);
    throw e;
  }
  if (admin) writeFirstRunBanner(admin, config, configPath, app.coordinatorUrl);
  // A module that fails in the background stops the appliance as a failure at start always did:
  // everything started is stopped and the error is the exit status (2 for a configuration).
  let failed: unknown;
  app.startup.whenReady().then(
    () => logger.info("svc started", { version: VERSION, revision: GIT_REVISION, start_ms: app.startup.readyAfterMs }),
    (e) => {
      failed = e;
      wake?.();
    },
  );
  if (!signalled && failed === undefined) await new Promise<void>((r) => (wake = r));
  if (failed !== undefined && !signalled) {
    await app.stop();
    throw failed;
  }
  logger.info("stopping: draining listeners, flushing the lake", { signal: signalled });
  try {
    const clean = await app.stop();
    // What this run accepted and what reached Parquet: equal after a clean stop.
    const sum = (name: string) => app.metrics.sumOf(name);
    logger.info("stopped", {
      clean,
      rows_accepted: sum("svc_hep_rows_accepted_total"),
      rows_written: sum("svc_lake_rows_written_total"),
      rows_lost: sum("svc_lake_rows_lost_total"),
    });
    return clean ? 0 : 1;
  } catch (e) {
    logger.error("stop failed", { error: errorMessage(e) });
    return 1;
  }
}

function runVersion(rest: string[]): number {
  const { flags } = parseArgs(rest, GLOBAL_FLAGS);
  if (flags.help) {
    console.log(formatHelp("svc version", "Print version and git revision.", GLOBAL_FLAGS));
    return 0;
  }
  console.log(`svc ${VERSION} (${GIT_REVISION}) bun ${Bun.version}`);
  return 0;
}

async function runMcp(rest: string[], logger: Logger): Promise<number> {
  const { flags } = parseArgs(rest, GLOBAL_FLAGS);
  if (flags.help) {
    console.log(
      formatHelp(
        "svc mcp --config-path <file>",
        "MCP tool server on stdin/stdout (docs/MCP.md): svc_search_transactions, svc_query_sql, svc_query. Needs mcp.svc_token and mcp.svc_base_url.",
        GLOBAL_FLAGS,
      ),
    );
    return 0;
  }
  const { config } = loadConfig({ path: flags["config-path"] as string | undefined });
  // Standard output is the protocol: logs go to standard error only.
  configureLogging({ level: config.log.level, format: "json" });
  return await runMcpStdio(config, logger, process.env);
}

async function runServe(rest: string[], logger: Logger): Promise<number> {
  const { flags } = parseArgs(rest, SERVE_FLAGS);
  if (flags.help) {
    console.log(
      formatHelp("svc serve [--config-path <file>] [--reset-admin-password]", "Run the appliance.", SERVE_FLAGS),
    );
    return 0;
  }
  const { config, warnings } = loadConfig({ path: flags["config-path"] as string | undefined });
  if (flags["reset-admin-password"]) {
    // docs/API.md "Authentication" (password login): writes the configured digest and exits without serving.
    console.log(`svc: ${resetAdminPassword(config.coordinator)}`);
    return 0;
  }
  configureLogging({ level: config.log.level, format: config.log.format });
  for (const w of warnings) logger.warn(w);
  return await serve(config, logger, flags["config-path"] as string | undefined);
}

export interface MainOptions {
  /**
   * Runs once before the lake first loads the DuckDB driver (the executable maps its embedded
   * libduckdb.so there, src/bin.ts): not at start, so `svc serve` answers before (docs/ARCHITECTURE.md "Start-up").
   */
  beforeDuckDb?: () => Promise<void>;
}

export async function main(argv: readonly string[], opts: MainOptions = {}): Promise<number> {
  if (opts.beforeDuckDb) beforeDuckDbLoads(opts.beforeDuckDb);
  const logger = createLogger();
  process.on("unhandledRejection", (reason) => logger.error("unhandled promise rejection", { error: reason }));
  process.on("uncaughtException", (e) => logger.error("uncaught exception", { error: e }));

  let command = "serve";
  let rest = [...argv];
  if (rest[0] && !rest[0].startsWith("-")) {
    command = rest[0];
    rest = rest.slice(1);
  }
  try {
    // `svc --help` (no command) lists the commands; `svc <command> --help` describes one.
    if (command === "help" || (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h"))) {
      console.log(HELP);
      return 0;
    }
    if (argv.length === 1 && argv[0] === "--version") [command, rest] = ["version", []];
    const run = COMMANDS.find((c) => c.name === command)?.run;
    if (run) return await run(rest, logger);
    throw new UsageError(`unknown command "${command}" (try: svc help)`);
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`svc: ${e.message}`);
      return 2;
    }
    if (e instanceof AppError && e.code === "CONFIG_INVALID") {
      console.error(`svc: ${e.message}`);
      return 2;
    }
    console.error(`svc: ${errorMessage(e)}`);
    return 1;
  }
}

if (import.meta.main) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      console.error(`svc: ${errorMessage(e)}`);
      process.exit(1);
    },
  );
}
