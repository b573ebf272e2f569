/**
 * Points the spec's rules and the reference decoder accept, through the real receiver into the
 * lake (docs/ARCHITECTURE.md "Line-protocol types"): an unsigned value above 2^63-1 (a UBIGINT
 * column, the exact value stored, kept across a restart), a tag or field named `time` (dropped as
 * a value of another type for the timestamp column, rule 6; the point is written), and an integer
 * `protocol` field in structured HEP table mode (docs/LINE-PROTOCOL.md "Structured HEP table mode", rule 3).
 */
import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { PEERS, peerTest, pyPeersPython, tempDir } from "../harness.ts";
import { lpWrite, metricValue, startLineProtocol, tableRows } from "./lineproto-helpers.ts";

const T0 = 1_700_000_000;

describe("line-protocol points the reference accepts", () => {
  test("unsigned values above 2^63-1 are stored exactly in a UBIGINT column, also after a restart", async () => {
    await using dir = tempDir();
    {
      await using s = await startLineProtocol(dir.path);
      const lake = s.a.app.lake!;
      const r = await lpWrite(
        s.lpUrl,
        "/write?db=u&precision=s",
        `m v=18446744073709551615u ${T0}\nm v=9223372036854775808u ${T0 + 1}\nm v=7u ${T0 + 2}`,
      );
      expect(r.status).toBe(204);
      expect(lake.table("u.m")!.columns).toEqual([
        { name: "time", type: "timestamp" },
        { name: "v", type: "uint64" },
      ]);
      await lake.sync();
      const q = await lake.query(`SELECT CAST(v AS VARCHAR) AS v, typeof(v) AS t FROM svc_lake.u.m ORDER BY "time"`);
      expect(q.rows).toEqual([
        { v: "18446744073709551615", t: "UBIGINT" },
        { v: "9223372036854775808", t: "UBIGINT" },
        { v: "7", t: "UBIGINT" },
      ]);
      // BIGINT-sized unsigned values still make BIGINT columns (rule 5).
      expect((await lpWrite(s.lpUrl, "/write?db=u&precision=s", `n v=42u ${T0}`)).status).toBe(204);
      expect(lake.table("u.n")!.columns[1]).toEqual({ name: "v", type: "int64" });
      await lake.flush();
    }
    await using s = await startLineProtocol(dir.path);
    expect((await lpWrite(s.lpUrl, "/write?db=u&precision=s", `m v=18446744073709551614u ${T0 + 3}`)).status).toBe(204);
    const rows = await tableRows(s.a.app.lake!, "u", "m");
    expect(rows.map((r) => String(r.v))).toEqual([
      "18446744073709551615",
      "9223372036854775808",
      "7",
      "18446744073709551614",
    ]);
  });

  peerTest(
    "a UBIGINT column is read by stock DuckDB's ducklake extension with the exact value",
    [PEERS.pyDuckLake],
    async () => {
      await using dir = tempDir();
      {
        await using s = await startLineProtocol(dir.path);
        expect(
          (await lpWrite(s.lpUrl, "/write?db=u&precision=s", `m v=18446744073709551615u ${T0}\nm v=5u ${T0 + 1}`))
            .status,
        ).toBe(204);
        await s.a.app.lake!.flush();
      }
      const r = Bun.spawnSync(
        [
          pyPeersPython(),
          resolve(import.meta.dir, "../peers/ducklake_read.py"),
          "read",
          `${dir.path}/catalog.sqlite`,
          `${dir.path}/lake/`,
          "u.m",
          `"time"`,
        ],
        {
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      expect(r.stderr.toString()).toBe("");
      const out = r.stdout.toString();
      expect((JSON.parse(out) as { columns: unknown }).columns).toEqual([
        ["time", "TIMESTAMP"],
        ["v", "UBIGINT"],
      ]);
      // Python prints integers exactly (JSON.parse would round this one to a double).
      expect(out).toContain(`"v": 18446744073709551615}`);
    },
  );

  test("a tag or field named time: 204, the point stored with its own timestamp, the value counted as a type mismatch", async () => {
    await using dir = tempDir();
    await using s = await startLineProtocol(dir.path);
    const lake = s.a.app.lake!;
    const r = await lpWrite(
      s.lpUrl,
      "/write?db=t&precision=s",
      `m,time=yesterday,host=a v=1i ${T0}\nm,Time=x time=5i,v=2i ${T0 + 1}`,
    );
    expect(r.status).toBe(204);
    expect(await tableRows(lake, "t", "m")).toEqual([
      { time_us: T0 * 1_000_000, host: "a", v: 1 },
      { time_us: (T0 + 1) * 1_000_000, host: null, v: 2 },
    ]);
    expect(lake.table("t.m")!.columns.map((c) => [c.name, c.type])).toEqual([
      ["time", "timestamp"],
      ["host", "varchar"],
      ["v", "int64"],
    ]);
    const metrics = await (await fetch(`${s.a.app.coordinatorUrl}/metrics`)).text();
    expect(metricValue(metrics, "svc_lp_write_errors_total", { stage: "type_mismatch" })).toBe(3);
  });

  test("structured HEP table mode: protocol=17i is accepted (HEP table mode rule 3) and stored as the transport HEP ingest stores", async () => {
    await using dir = tempDir();
    await using s = await startLineProtocol(dir.path, { allow_hep_sip_call: true });
    const lake = s.a.app.lake!;
    const body = [
      `hep_proto_1_call session_id="lp-proto-udp",src_port=5060i,dst_port=5060i,protocol=17i ${T0}`,
      `hep_proto_1_call session_id="lp-proto-tcp",protocol=6i ${T0 + 1}`,
    ].join("\n");
    const r = await lpWrite(s.lpUrl, "/write?precision=s", body);
    expect(r.status).toBe(204);
    await lake.sync();
    const q = await lake.query(
      `SELECT session_id, protocol, src_port FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE 'lp-proto-%' ORDER BY session_id`,
    );
    expect(q.rows).toEqual([
      { session_id: "lp-proto-tcp", protocol: "TCP", src_port: null },
      { session_id: "lp-proto-udp", protocol: "UDP", src_port: 5060 },
    ]);
    const bad = await lpWrite(
      s.lpUrl,
      "/write?precision=s",
      `hep_proto_1_call session_id="lp-proto-bad",protocol=300i ${T0}`,
    );
    expect(bad.status).toBe(400);
    expect(bad.body?.lines?.map((l) => [l.line, l.key, l.reason])).toEqual([[1, "protocol", "type_mismatch"]]);
  });
});
