/**
 * kill -9 with 3 HEP ingest threads (ingest.hep.threads, docs/ARCHITECTURE.md "Several ingest
 * threads") loses nothing sealed and doubles nothing. Each thread seals its own batches into the
 * one spool (docs/ARCHITECTURE.md "Write path"); the appliance runs as a child process (`svc serve`,
 * test/peers/svc-child.ts) with no flush during a round, so every row is in the spool when the kill comes.
 *
 * Per round: a known set of INVITEs over UDP from four source sockets and from one (one flow, spread
 * over the threads by the random pick) is sent in steps the child counts as received; the test waits
 * until every one of them is in a sealed spool batch, sends a tail from one socket and SIGKILLs the
 * child while that tail is being read and sealed. After the kill: the sealed spool batches hold
 * every row of the known set and no Call-ID twice; an in-process appliance on the same directories
 * then holds exactly the sealed rows of the round (each once) and every row of the earlier rounds.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startTestAppliance, testConfigJson } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { invite } from "../fixtures/sip.ts";
import { metricFamily } from "../peers/metric-family.ts";
import { spooledCallIds } from "../peers/spool.ts";
import { spawnSvc } from "../peers/svc-child.ts";

const ROUNDS = 3;
/** Four sources with 150 datagrams each, one source with 400, and a tail of 300 from one source. */
const SOURCES = [150, 150, 150, 150, 400];
const TAIL = 300;
/** No flush during a round: every sealed row is in the spool at the kill, nothing in Parquet yet. */
const OVERRIDES = {
  ingest: { hep: { threads: 3 } },
  storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 1_000_000 } },
};
const CALL = "svc_lake.main.hep_proto_1_call";

const packet = (callId: string, i: number) =>
  encodeHep3({
    srcIp: "10.7.0.1",
    dstIp: "10.7.0.2",
    srcPort: 5060,
    dstPort: 5060,
    ipProtocol: 17,
    timestampUs: Date.now() * 1000 + i,
    protoType: 1,
    captureId: 77,
    payload: invite({ callId, from: "tk9a", to: "tk9b" }),
  });

test(`kill -9 under 3 HEP ingest threads, ${ROUNDS} times: every sealed row is there once after the restart`, async () => {
  await using dir = tempDir("svc-threads-kill9-");
  const cfgPath = join(dir.path, "config.json");
  // A configured admin digest: no first-run banner (plain text) among the JSON lines checked below.
  const auth = { coordinator: { auth: { admin_password_hash: sha256Hex("threads-kill9-admin-password") } } };
  writeFileSync(cfgPath, JSON.stringify(testConfigJson(dir.path, { ...OVERRIDES, ...auth, log: { level: "info" } })));
  const spoolDir = join(dir.path, "spool", "main.hep_proto_1_call");
  const kept = new Map<number, number>(); // round → rows stored after its restart
  const figures: string[] = [];

  for (let round = 0; round < ROUNDS; round++) {
    const child = await spawnSvc("child appliance", cfgPath);
    const udpPort = child.port("hep-udp");
    const metrics = async () => await (await fetch(`http://${child.addr.get("coordinator-http")}/metrics`)).text();
    const received = async () =>
      [...metricFamily(await metrics(), "svc_hep_thread_packets_total").values()].reduce((x, y) => x + y, 0);
    const sockets = await Promise.all(SOURCES.map(() => Bun.udpSocket({})));
    const known: string[] = [];
    try {
      // Round-robin over the sources in steps of 50 the child has counted (no receive-buffer loss).
      const sent = SOURCES.map(() => 0);
      while (sent.some((n, s) => n < SOURCES[s]!)) {
        for (let s = 0; s < SOURCES.length; s++) {
          for (let k = 0; k < 10 && sent[s]! < SOURCES[s]!; k++, sent[s]!++) {
            const id = `tk9-${round}-${s}-${sent[s]}`;
            sockets[s]!.send(packet(id, sent[s]!), udpPort, "127.0.0.1");
            known.push(id);
          }
        }
        const want = known.length;
        await waitFor("the step received", async () => (await received()) >= want || undefined, 20_000, 5);
      }
      const perThread = metricFamily(await metrics(), "svc_hep_thread_packets_total");
      expect([...perThread.keys()].sort()).toEqual(['thread="0"', 'thread="1"', 'thread="2"']);
      for (const [k, n] of perThread) expect({ k, some: n > 0 }).toEqual({ k, some: true });
      // Sealed: every known row in a spool batch the child wrote (no flush empties the spool).
      const roundIds = async () => (await spooledCallIds(spoolDir, 0)).filter((id) => id.startsWith(`tk9-${round}-`));
      await waitFor(
        "every known row sealed into the spool",
        async () => (await roundIds()).length >= known.length || undefined,
        20_000,
        10,
      );
      // A tail from one source, and the kill while the threads read and seal it.
      for (let i = 0; i < TAIL; i++) sockets[4]!.send(packet(`tk9-${round}-tail-${i}`, i), udpPort, "127.0.0.1");
      await waitFor(
        "part of the tail read",
        async () => (await received()) >= known.length + TAIL / 3 || undefined,
        20_000,
        1,
      );
      child.proc.kill("SIGKILL");
      expect(await child.proc.exited).not.toBe(0);
    } finally {
      for (const s of sockets) s.close();
      if (child.proc.exitCode === null) child.proc.kill("SIGKILL");
    }
    expect(child.lines.filter((l) => l.level === "error" || l.level === "raw")).toEqual([]);

    const sealed = (await spooledCallIds(spoolDir, 0)).filter((id) => id.startsWith(`tk9-${round}-`));
    expect(sealed.length).toBe(new Set(sealed).size);
    const sealedSet = new Set(sealed);
    expect(known.filter((id) => !sealedSet.has(id))).toEqual([]);
    {
      await using a = await startTestAppliance(dir.path, OVERRIDES);
      const lake = a.app.lake!;
      await lake.sync();
      const dups = await lake.query(
        `SELECT session_id, count(*) AS n FROM ${CALL} GROUP BY 1 HAVING count(*) > 1 LIMIT 5`,
      );
      expect(dups.rows).toEqual([]);
      const rows = await lake.query(`SELECT session_id FROM ${CALL} WHERE starts_with(session_id, $1)`, [
        `tk9-${round}-`,
      ]);
      const stored = rows.rows.map((r) => String(r.session_id)).sort();
      // Exactly the sealed rows: none lost, none invented, none twice.
      expect(stored).toEqual([...sealed].sort());
      for (const [prev, n] of kept) {
        const r = await lake.query(`SELECT count(*) AS n FROM ${CALL} WHERE starts_with(session_id, $1)`, [
          `tk9-${prev}-`,
        ]);
        expect({ round: prev, n: Number(r.rows[0]!.n) }).toEqual({ round: prev, n });
      }
      kept.set(round, stored.length);
      figures.push(`round ${round}: known ${known.length}, tail sealed ${sealed.length - known.length} of ${TAIL}`);
    }
  }
  console.info(`threads kill9: ${figures.join("; ")}`);
}, 120_000);
