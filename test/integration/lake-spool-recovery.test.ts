import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { invite } from "../fixtures/sip.ts";

describe("spool recovery never blocks the lake", () => {
  test("a spool file DuckDB cannot read is quarantined after repeated flush failures; everything else is written", async () => {
    await using dir = tempDir();
    const spool = join(dir.path, "spool", "main.hep_proto_1_call");
    mkdirSync(spool, { recursive: true });
    // A file named like a sealed batch (seq.columns.rows) whose content is not our CSV.
    writeFileSync(join(spool, `${Date.now() * 1000 - 5_000_000}.19.3.csv`), 'garbage,"unterminated\n1,2,3\n');
    await using a = await startTestAppliance(dir.path, { storage: { lakehouse: { flush_interval_sec: 0.2 } } });
    const udp = await Bun.udpSocket({});
    for (let i = 0; i < 5; i++) {
      udp.send(
        encodeHep3({
          srcIp: "10.0.0.1",
          dstIp: "10.0.0.2",
          timestampUs: Date.now() * 1000,
          protoType: 1,
          payload: invite({ callId: `good-${i}`, from: "a", to: "b" }),
        }),
        a.app.ingest!.listeners.udp!.port(),
        "127.0.0.1",
      );
    }
    udp.close();
    await waitFor(
      "good rows in Parquet",
      async () => (await a.app.lake!.files("main.hep_proto_1_call")).reduce((s, f) => s + f.rows, 0) === 5,
      20_000,
    );
    expect(a.app.metrics.render()).toMatch(/svc_lake_rows_lost_total\{reason="unreadable_spool"\} 3/);
    expect(readdirSync(join(dir.path, "spool", "failed")).length).toBe(1);
    const r = await a.app.lake!.query(`SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call`);
    expect(r.rows[0]!.n).toBe(5);
  });

  test("a row left half-written by a failing producer is discarded, the next rows are intact", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path);
    const lake = a.app.lake!;
    await lake.defineTable({
      schema: "main",
      name: "t",
      columns: [
        { name: "ts", type: "timestamp" },
        { name: "s", type: "varchar" },
      ],
      timeColumn: "ts",
      sortBy: ["ts"],
    });
    lake.row("main.t")!.time(1).str("ok-1").end();
    lake.row("main.t")!.time(2); // the producer threw here
    lake.row("main.t")!.time(3).str("ok-3").end();
    await lake.flush();
    expect((await lake.query(`SELECT s FROM svc_lake.main.t ORDER BY ts`)).rows).toEqual([
      { s: "ok-1" },
      { s: "ok-3" },
    ]);
    expect(a.app.metrics.render()).toMatch(/svc_lake_rows_lost_total\{reason="partial_row"\} 1/);
    expect(existsSync(join(dir.path, "spool", "failed"))).toBe(false);
  });
});
