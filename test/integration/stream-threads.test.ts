/**
 * The live stream of several HEP ingest threads (docs/STREAM.md "Several ingest threads"): UDP
 * datagrams go to the threads at random, so the messages of one call are read by different
 * threads and handed over apart; a subscriber still gets every call's messages in capture order,
 * each once. Real appliance, real UDP on loopback, the npm ws client.
 */
import { describe, expect, test } from "bun:test";
import { startTestAppliance } from "../appliance.ts";
import { invite, request, response, type CallParams } from "../fixtures/sip.ts";
import { tempDir, waitFor } from "../harness.ts";
import { captureOn, hep, series, udpSender } from "./stream-helpers.ts";

const CALLS = 300;

/** A call's messages in the order an agent captured them; the label names each in the frames. */
function callMessages(call: CallParams): Array<[label: string, payload: string]> {
  return [
    ["INVITE", invite(call)],
    ["100", response(100, "Trying", "INVITE", call)],
    ["180", response(180, "Ringing", "INVITE", call)],
    ["200", response(200, "OK", "INVITE", call)],
    ["ACK", request("ACK", { ...call, cseq: 1 })],
    ["BYE", request("BYE", call)],
    ["200-BYE", response(200, "OK", "BYE", { ...call, cseq: 2 })],
  ];
}

describe("live stream over several ingest threads", () => {
  test("every call's messages reach a subscriber once each and in capture order, though the threads hand them over apart", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      ingest: {
        hep: { threads: 3 },
        hep_stream: { enable: true, rate_per_sub_pps: 0, buffer_size: 100_000, per_sub_queue_len: 100_000 },
      },
    });
    const base = `${a.app.nodeUrl!.replace(/^http/, "ws")}/stream`;
    const udp = await udpSender(a.app.ingest!.listeners.udp!.port());
    using sub = await captureOn(base, udp.send);
    // Calls interleaved as on a busy proxy: one message of each call in turn, 1 µs apart (hep() stamps).
    const calls = Array.from({ length: CALLS }, (_, i) =>
      callMessages({ callId: `thr-${i}@pbx`, from: `a${i}`, to: `b${i}` }),
    );
    const want = callMessages({ callId: "x", from: "a", to: "b" }).map(([label]) => label);
    for (let step = 0; step < want.length; step++)
      udp.send(calls.map((c, i) => hep({ srcPort: 10_000 + i, payload: c[step]![1] })));
    await waitFor(
      "every message on the stream",
      () => sub.frames.filter((f) => f.sip?.callid.startsWith("thr-")).length >= CALLS * want.length,
      20_000,
    );
    // The messages were read by several threads: otherwise this test shows nothing.
    const perThread = [0, 1, 2].map((t) =>
      series(a.app.metrics.render(), "svc_hep_thread_packets_total", `thread="${t}"`),
    );
    expect(perThread.filter((n) => n > 0).length).toBeGreaterThan(1);
    const byCall = new Map<string, string[]>();
    for (const f of sub.frames) {
      if (!f.sip?.callid.startsWith("thr-")) continue;
      const { resp_code: code, method, cseq } = f.sip;
      const seq = byCall.get(f.sip.callid) ?? [];
      seq.push(code === "" ? method : code === "200" && cseq.endsWith("BYE") ? "200-BYE" : code);
      byCall.set(f.sip.callid, seq);
    }
    expect(byCall.size).toBe(CALLS);
    const wrong = [...byCall].filter(([, seq]) => seq.join(" ") !== want.join(" "));
    expect(wrong.slice(0, 3)).toEqual([]);
  }, 60_000);
});
