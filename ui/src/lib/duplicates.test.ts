import { describe, expect, test } from "bun:test";
import { captureLabel, findDuplicates, type CapturedMessage } from "./duplicates.ts";

let n = 0;
const msg = (ms: number, capture: number, o: Partial<CapturedMessage> = {}): CapturedMessage => ({
  uuid: `u${++n}`,
  timestamp_us: ms * 1000,
  session_id: "c1",
  src_ip: "10.0.0.1",
  dst_ip: "10.0.0.2",
  src_port: 5060,
  dst_port: 5060,
  event: "INVITE",
  cseq_method: null,
  payload: "INVITE sip:b@x SIP/2.0\r\nCSeq: 1 INVITE\r\n\r\n",
  node_id: capture,
  data_extra: { node_name: `edge-${capture}` },
  ...o,
});

describe("duplicates", () => {
  test("the same packet from a second capture point is a copy of the first", () => {
    const a = msg(0, 2001);
    const b = msg(0.4, 2002);
    const d = findDuplicates([b, a]);
    expect([...d.copyOf]).toEqual([[b.uuid, a.uuid]]);
    expect(d.seenBy.get(a.uuid)).toEqual(["capture 2001 (edge-2001)", "capture 2002 (edge-2002)"]);
    expect(d.seenBy.has(b.uuid)).toBe(false);
  });

  test("a retransmission (same capture point, or after T1) is not a copy", () => {
    const first = msg(0, 2001);
    const sameCapture = msg(1, 2001);
    const afterT1 = msg(500, 2002);
    expect(findDuplicates([first, sameCapture, afterT1]).copyOf.size).toBe(0);
  });

  test("another direction, payload or time window is a different message", () => {
    const a = msg(0, 2001);
    const otherDir = msg(0.1, 2002, { src_ip: "10.0.0.2", dst_ip: "10.0.0.1" });
    const otherPayload = msg(0.1, 2002, { payload: "SIP/2.0 100 Trying\r\nCSeq: 1 INVITE\r\n\r\n", event: "100" });
    const otherPort = msg(0.1, 2002, { dst_port: 5080 });
    expect(findDuplicates([a, otherDir, otherPayload, otherPort]).copyOf.size).toBe(0);
    expect(findDuplicates([a, msg(150, 2002)], 100).copyOf.size).toBe(0);
    expect(findDuplicates([a, msg(150, 2002)], 200).copyOf.size).toBe(1);
  });

  test("three capture points: two copies of one message; without payloads Call-ID, CSeq and event decide", () => {
    const a = msg(0, 1, { payload: null, data_extra: { cseq: 1 } });
    const b = msg(1, 2, { payload: null, data_extra: { cseq: 1 } });
    const c = msg(2, 3, { payload: null, data_extra: { cseq: 1 } });
    const nextCseq = msg(3, 4, { payload: null, data_extra: { cseq: 2 } });
    const d = findDuplicates([a, b, c, nextCseq]);
    expect(d.copyOf.get(b.uuid)).toBe(a.uuid);
    expect(d.copyOf.get(c.uuid)).toBe(a.uuid);
    expect(d.copyOf.has(nextCseq.uuid)).toBe(false);
    expect(d.seenBy.get(a.uuid)?.length).toBe(3);
  });

  test("capture label from the capture id and node name, or data_extra.capture_id", () => {
    expect(captureLabel(msg(0, 7))).toBe("capture 7 (edge-7)");
    expect(captureLabel({ ...msg(0, 7), node_id: null, data_extra: { capture_id: 9 } })).toBe("capture 9");
    expect(captureLabel({ ...msg(0, 7), node_id: null, data_extra: {} })).toBe("capture (unknown)");
  });
});
