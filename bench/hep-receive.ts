/**
 * The HEP receive path alone (no lake): UDP listener → decode → SIP parse → CSV rows in a
 * BatchSink, sealed every 100 ms and thrown away (buffers reused), on the main thread of a child
 * process. A sender process sends realistic INVITEs at --rate for --seconds; reported: CPU of the
 * receiving thread per message and packets handled, to find what the ingest thread costs.
 *   bun bench/hep-receive.ts --rate 60000 --seconds 10 [--profile DIR] [--batch 0]
 * `--batch 0`: Bun's UDP socket instead of the recvmmsg batch reader (ingest.hep.udp.batch_receive).
 */
import { MetricsRegistry, createLogger, type TableDef } from "../src/core/index.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");

if (args.has("serve")) {
  const { BatchSink, createHepListeners, createHepPipeline } = await import("../src/ingest/index.ts");
  const { loadConfig } = await import("../src/config/index.ts");
  const cfg = loadConfig({
    env: {},
    json: {
      ingest: {
        hep: {
          udp: { listen: "127.0.0.1:0", socket_buffer_bytes: 67108864, batch_receive: args.get("batch") !== "0" },
          tcp: { enable: false },
        },
      },
    },
  }).config;
  const registry = new MetricsRegistry();
  const logger = createLogger();
  let sealed = 0;
  const sink: InstanceType<typeof BatchSink> = new BatchSink({
    define: async (def: TableDef) => def,
    backlog: () => 0,
    maxBufferedRows: 1e9,
    rowsLost: registry.counter("svc_lake_rows_lost_total", "x", ["reason"]),
    due: { ms: 100, run: () => seal() },
  });
  const seal = () => {
    for (const b of sink.seal()) {
      sealed += b.rows;
      sink.giveBack(b.key, b.buffer);
    }
  };
  const pipeline = createHepPipeline(cfg.ingest, sink, logger, registry);
  await pipeline.start();
  const l = createHepListeners(cfg.ingest, pipeline, logger, registry);
  for (const m of l.modules) await m.start();
  setInterval(seal, 100);
  console.log(JSON.stringify({ port: l.listeners.udp!.port() }));
  process.on("SIGTERM", () => {
    seal();
    console.log(JSON.stringify({ sealed, received: registry.sumOf("svc_hep_packets_received_total") }));
    process.exit(0);
  });
} else {
  const rate = Number(args.get("rate") ?? 60000);
  const seconds = Number(args.get("seconds") ?? 10);
  const profile = args.get("profile");
  const child = Bun.spawn(
    [
      process.execPath,
      ...(profile ? ["--cpu-prof-md", `--cpu-prof-dir=${profile}`] : []),
      import.meta.path,
      "--serve",
      "1",
      "--batch",
      args.get("batch") ?? "1",
    ],
    {
      stdout: "pipe",
      stderr: "inherit",
    },
  );
  const reader = child.stdout.getReader();
  const lines: string[] = [];
  let buf = "";
  const next = async (): Promise<string> => {
    while (!buf.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("receiver ended");
      buf += new TextDecoder().decode(value);
    }
    const i = buf.indexOf("\n");
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    lines.push(line);
    return line;
  };
  const { port } = JSON.parse(await next()) as { port: number };
  const ticks = async () => {
    const st = await Bun.file(`/proc/${child.pid}/task/${child.pid}/stat`).text();
    const f = st.slice(st.lastIndexOf(")") + 2).split(" ");
    return [Number(f[11]), Number(f[12])] as const;
  };
  await Bun.sleep(300);
  const t0 = await ticks();
  const sender = Bun.spawn(
    [
      process.execPath,
      `${import.meta.dir}/hep-sender.ts`,
      "--target",
      `127.0.0.1:${port}`,
      "--rate",
      String(rate),
      "--seconds",
      String(seconds),
    ],
    { stdout: "pipe" },
  );
  const sent = JSON.parse(await new Response(sender.stdout).text()) as { sent: number; rate: number };
  await Bun.sleep(300);
  const t1 = await ticks();
  child.kill("SIGTERM");
  const done = JSON.parse(await next()) as { sealed: number; received: number };
  const userSeconds = (t1[0] - t0[0]) / 100;
  const sysSeconds = (t1[1] - t0[1]) / 100;
  const cpuSeconds = userSeconds + sysSeconds;
  console.log(
    JSON.stringify({
      rate,
      seconds,
      sender_rate: sent.rate,
      sent: sent.sent,
      received: done.received,
      rows: done.sealed,
      receiver_cores: Math.round((cpuSeconds / seconds) * 100) / 100,
      us_per_msg: Math.round(((cpuSeconds * 1e6) / Math.max(1, done.received)) * 100) / 100,
      user_us_per_msg: Math.round(((userSeconds * 1e6) / Math.max(1, done.received)) * 100) / 100,
      sys_us_per_msg: Math.round(((sysSeconds * 1e6) / Math.max(1, done.received)) * 100) / 100,
    }),
  );
}
