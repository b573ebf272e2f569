/**
 * The time stamps of loadgen's HEP copies (docs/LOADGEN.md "HEP mirroring"): a loadgen client
 * calls a loadgen server, both mirroring to a running appliance, many calls quickly; in the lake,
 * every call's copies sorted by time are in wire order at each capture point (INVITE, 180, 200,
 * ACK, BYE, 200), no two copies of one end share a time, and each message's sent copy comes before
 * its received copy at the other end: a ladder of a loadgen call is never reordered.
 */
import { expect, test } from "bun:test";
import { Engine } from "../../src/loadgen/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { opts, startUas } from "./loadgen-harness.ts";

const CALLS = 300;
const UAC_NODE = 2411;
const UAS_NODE = 2412;
/** What loadgen's uac and uas exchange per call, in wire order. */
const WIRE = ["INVITE", "180/INVITE", "200/INVITE", "ACK", "BYE", "200/BYE"] as const;
/** Which end sends each message. */
const SENDER: Record<string, number> = {
  INVITE: UAC_NODE,
  "180/INVITE": UAS_NODE,
  "200/INVITE": UAS_NODE,
  ACK: UAC_NODE,
  BYE: UAC_NODE,
  "200/BYE": UAS_NODE,
};

test("loadgen uac → loadgen uas, both mirroring: every call's copies sorted by time are in wire order", async () => {
  await using dir = tempDir("svc-loadgen-order-");
  await using a = await startTestAppliance(dir.path, { storage: { lakehouse: { flush_interval_sec: 3600 } } });
  const hep = { hep_addr: `127.0.0.1:${a.app.ingest!.listeners.udp!.port()}` };
  const uas = await startUas({ ...hep, local_ip: "127.0.0.2", hep_capture_id: UAS_NODE });
  let sent = 0;
  try {
    const uac = new Engine({
      opts: opts({
        scenario_name: "uac",
        remote_addr: `127.0.0.2:${uas.binds[0]!.port}`,
        rate: 150,
        total_calls: CALLS,
        hep_capture_id: UAC_NODE,
        ...hep,
      }),
      mode: "load",
    });
    await uac.start();
    await uac.done;
    expect(uac.snapshot().calls_successful).toBe(CALLS);
    await waitFor("the server ended every call", () => uas.snapshot().calls_successful === CALLS);
    sent = uac.snapshot().hep_sent + uas.snapshot().hep_sent;
  } finally {
    await uas.stop();
  }
  // Each end copies its six messages per call; a loaded machine may add a retransmission (T1 = 500 ms).
  expect(sent).toBeGreaterThanOrEqual(CALLS * WIRE.length * 2);
  const lake = a.app.lake!;
  const rows = await waitFor(
    "every copy stored",
    async () => {
      await lake.sync();
      const r = await lake.query(
        `SELECT session_id, node_id, epoch_us("timestamp") AS us, CASE WHEN method IS NOT NULL THEN method ELSE response_code::VARCHAR || '/' || cseq_method END AS label FROM svc_lake.main.hep_proto_1_call`,
      );
      return r.rows.length === sent ? r.rows : undefined;
    },
    30_000,
  );
  const calls = new Map<string, Array<{ node: number; us: number; label: string }>>();
  for (const r of rows) {
    const list = calls.get(String(r.session_id)) ?? [];
    list.push({ node: Number(r.node_id), us: Number(r.us), label: String(r.label) });
    calls.set(String(r.session_id), list);
  }
  expect(calls.size).toBe(CALLS);
  const disordered: string[] = [];
  for (const [callId, copies] of calls) {
    const problems: string[] = [];
    const all = copies.toSorted((x, y) => x.us - y.us);
    if (
      [UAC_NODE, UAS_NODE].some((node) =>
        all.some((c, k) => k > 0 && c.node === node && all.slice(0, k).some((d) => d.node === node && d.us === c.us)),
      )
    )
      problems.push("two copies of one end at one time");
    // The first copy of each message at each end (a retransmission is a later copy of the same message).
    const byTime = all.filter((c, k) => !all.slice(0, k).some((d) => d.node === c.node && d.label === c.label));
    // Each end's copies: its six messages in wire order.
    for (const node of [UAC_NODE, UAS_NODE]) {
      const mine = byTime.filter((c) => c.node === node);
      if (mine.map((c) => c.label).join(" ") !== WIRE.join(" "))
        problems.push(`node ${node}: ${mine.map((c) => c.label).join(" ")}`);
    }
    // Across both ends: a message is sent before it is received. (Nothing more: the client sends
    // ACK and BYE back to back, both in flight before the server reads the ACK.)
    for (const label of WIRE) {
      const s = byTime.find((c) => c.label === label && c.node === SENDER[label]);
      const r = byTime.find((c) => c.label === label && c.node !== SENDER[label]);
      if (!s || !r || s.us >= r.us) problems.push(`${label} received before it was sent`);
    }
    if (problems.length > 0) disordered.push(`${callId}: ${problems.join("; ")}`);
  }
  expect({ disordered: disordered.length, first: disordered.slice(0, 3) }).toEqual({ disordered: 0, first: [] });
}, 120_000);
