/**
 * Required: "SIGTERM during load exits 0 and loses nothing already accepted". The real
 * appliance runs as a child; a sender streams HEP over TCP; SIGTERM arrives mid-stream. The child
 * logs how many rows it accepted and wrote at stop; after a restart every accepted row is there.
 */
import { expect, test } from "bun:test";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startTestAppliance, testConfigJson } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { invite } from "../fixtures/sip.ts";

test("SIGTERM during load exits 0 and every accepted row is in the lake", async () => {
  await using dir = tempDir();
  const overrides = { log: { level: "info" }, storage: { lakehouse: { batch_size: 2000, flush_interval_sec: 5 } } };
  const cfg = `${dir.path}/svc.json`;
  await Bun.write(cfg, JSON.stringify(testConfigJson(dir.path, overrides)));
  const child = Bun.spawn([process.execPath, "src/main.ts", "serve", "--config-path", cfg], {
    stderr: "pipe",
    stdout: "ignore",
  });
  const lines: string[] = [];
  const reader = (async () => {
    const dec = new TextDecoder();
    const r = child.stderr.getReader();
    let buf = "";
    for (;;) {
      const { value: chunk, done } = await r.read();
      if (done) break;
      buf += dec.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        lines.push(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
    }
  })();
  // The log lines; a first start also prints the plain-text first-run banner on stderr.
  const logLines = () =>
    lines.flatMap((x) => {
      try {
        return [JSON.parse(x) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  const tcpPort = await waitFor("hep-tcp listening", () => {
    const l = (logLines() as Array<{ msg?: string; module?: string; address?: string }>).find(
      (j) => j.msg === "listening" && j.module === "hep-tcp",
    );
    return l?.address ? Number(l.address.split(":").pop()) : undefined;
  });
  const sock = await Bun.connect({ hostname: "127.0.0.1", port: tcpPort, socket: { data() {}, error() {} } });
  let sent = 0;
  let stop = false;
  const sender = (async () => {
    while (!stop) {
      const burst: Uint8Array[] = [];
      for (let i = 0; i < 200; i++, sent++) {
        burst.push(
          encodeHep3({
            srcIp: "10.9.0.1",
            dstIp: "10.9.0.2",
            srcPort: 5060,
            dstPort: 5060,
            ipProtocol: 6,
            timestampUs: Date.now() * 1000,
            protoType: 1,
            payload: invite({ callId: `term-${sent}`, from: "a", to: "b" }),
          }),
        );
      }
      sock.write(Buffer.concat(burst));
      await Bun.sleep(5);
    }
  })();
  await waitFor("some traffic accepted", () => sent > 3000);
  child.kill("SIGTERM");
  const code = await child.exited;
  stop = true;
  await sender;
  sock.end();
  await reader;
  expect(code).toBe(0);
  const stopped = logLines().find((j) => j.msg === "stopped");
  expect(stopped).toBeDefined();
  const accepted = Number(stopped!.rows_accepted);
  expect(accepted).toBeGreaterThan(0);
  expect(stopped!.rows_written).toBe(accepted);
  expect(stopped!.rows_lost).toBe(0);
  // A fresh start reads exactly the accepted rows back from Parquet, each Call-ID once.
  await using a = await startTestAppliance(dir.path, overrides);
  const r = await a.app.lake!.query(
    `SELECT count(*) AS n, count(DISTINCT session_id) AS d FROM svc_lake.main.hep_proto_1_call`,
  );
  expect(r.rows[0]).toEqual({ n: accepted, d: accepted });
}, 60_000);
