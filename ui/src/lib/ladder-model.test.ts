import { describe, expect, test } from "bun:test";
import { aliasLookup } from "./ladder-columns.ts";
import { MARKER_KINDS, ladderModel, type CallEvent } from "./ladder-model.ts";
import type { TxMessage } from "./transaction.ts";

let seq = 0;
function msg(event: string, ms: number, src: string, dst: string, extra: Partial<TxMessage> = {}): TxMessage {
  const start = /^\d{3}$/.test(event)
    ? `SIP/2.0 ${event} ${event === "100" ? "Trying" : "OK"}`
    : `${event} sip:b@x SIP/2.0`;
  const [sIp, sPort] = src.split(":");
  const [dIp, dPort] = dst.split(":");
  return {
    uuid: `u${++seq}`,
    timestamp_us: ms * 1000,
    session_id: "c1",
    src_ip: sIp!,
    dst_ip: dIp!,
    src_port: Number(sPort ?? 5060),
    dst_port: Number(dPort ?? 5060),
    event,
    method: null,
    response_code: null,
    cseq_method: null,
    caller: null,
    callee: null,
    proto_type: 1,
    payload: `${start}\r\nCall-ID: c1\r\nCSeq: 1 ${event}\r\nContent-Length: 0\r\n\r\n`,
    node_id: 2001,
    ...extra,
  };
}

const event = (kind: CallEvent["kind"], ms: number, summary: string): CallEvent => ({
  ...msg("RTCP", ms, "10.0.0.1:40001", "10.0.0.2:42001"),
  kind,
  summary,
  qos: null,
});

describe("ladderModel", () => {
  test("a live message without payload takes its label from the stream, its time slot among the stored ones, and is marked live", () => {
    const items = [msg("INVITE", 0, "A", "P"), msg("200", 3000, "P", "A")];
    const bye = msg("487", 1000, "P", "A", { payload: null, live: true, label: "487 Request Terminated" });
    const l = ladderModel([...items, bye], { mode: "ip", hideDuplicates: true });
    expect(l.arrows.map((a) => [a.number, a.label, a.live])).toEqual([
      [1, "INVITE", false],
      [2, "487 Request Terminated", true],
      [3, "200 OK", false],
    ]);
  });

  test("columns in order of appearance, arrows with numbers, deltas, labels and classes", () => {
    const items = [
      msg("INVITE", 0, "A", "P"),
      msg("100", 20, "P", "A"),
      msg("INVITE", 25, "P", "B", { dst_alias: "gw" }),
    ];
    const l = ladderModel(items, { mode: "ip", hideDuplicates: true });
    expect(l.columns.map((c) => c.name)).toEqual(["A", "P", "B (gw)"]);
    expect(l.arrows.map((a) => [a.number, a.from, a.to, a.label, a.deltaMs])).toEqual([
      [1, 0, 1, "INVITE", 0],
      [2, 1, 0, "100 Trying", 20],
      [3, 1, 2, "INVITE", 5],
    ]);
    expect(l.arrows.map((a) => a.cls)).toEqual(["ev-invite", "ev-1xx", "ev-invite"]);
  });

  test("each Call-ID gets its own leg index", () => {
    const l = ladderModel(
      [msg("INVITE", 0, "A", "B"), msg("INVITE", 1, "B", "C", { session_id: "c2" }), msg("100", 2, "B", "A")],
      { mode: "ip", hideDuplicates: true },
    );
    expect(l.sessions).toEqual(["c1", "c2"]);
    expect(l.arrows.map((a) => a.leg)).toEqual([0, 1, 0]);
  });

  test("a copy from a second capture point is folded into the first when hidden, marked when shown", () => {
    const first = msg("INVITE", 0, "A", "B");
    const copy = { ...first, uuid: "copy", timestamp_us: 300, node_id: 2002 };
    const items = [first, copy, msg("100", 10, "B", "A")];
    const hidden = ladderModel(items, { mode: "ip", hideDuplicates: true });
    expect(hidden.arrows.map((a) => a.uuid)).toEqual([first.uuid, items[2]!.uuid]);
    expect([hidden.duplicates, hidden.hidden]).toEqual([1, 1]);
    expect(hidden.arrows[0]!.seenBy).toEqual(["capture 2001", "capture 2002"]);
    const shown = ladderModel(items, { mode: "ip", hideDuplicates: false });
    expect(shown.arrows.map((a) => [a.number, a.copyFrom])).toEqual([
      [1, null],
      [2, "capture 2002"],
      [3, null],
    ]);
    expect([shown.duplicates, shown.hidden]).toEqual([1, 0]);
  });

  test("RTCP, media report and log events are marker rows in time order between the arrows", () => {
    const items = [msg("INVITE", 0, "A", "B"), msg("BYE", 9000, "A", "B")];
    const events = [
      event("log", 9000, "call ended by user"),
      event("media", 9000, "Media report · MOS 4.41"),
      event("rtcp", 5000, "RTCP SR · jitter 12"),
    ];
    const l = ladderModel(items, { mode: "ip", hideDuplicates: true, events });
    expect(l.arrows.map((a) => a.slot)).toEqual([0, 2]);
    expect(l.markers.map((m) => [m.slot, m.kind, m.summary, m.path])).toEqual([
      [1, "rtcp", "RTCP SR · jitter 12", "10.0.0.1:40001 → 10.0.0.2:42001"],
      [3, "log", "call ended by user", "10.0.0.1:40001 → 10.0.0.2:42001"],
      [4, "media", "Media report · MOS 4.41", "10.0.0.1:40001 → 10.0.0.2:42001"],
    ]);
    expect(l.markers.map((m) => MARKER_KINDS[m.kind].tag)).toEqual(["RTCP", "LOG", "MEDIA"]);
    // A log row without addresses (written by another writer): a dash, not "null".
    const bare = { ...event("log", 100, "no address"), src_ip: null, src_port: null, dst_ip: null, dst_port: null };
    const withBare = ladderModel(items, { mode: "ip", hideDuplicates: true, events: [bare] });
    expect(withBare.markers.map((m) => m.path)).toEqual(["— → —"]);
    // Markers do not add columns, and the BYE's delta is from the INVITE (the previous arrow).
    expect(l.columns.length).toBe(2);
    expect(l.arrows[1]!.deltaMs).toBe(9000);
  });

  test("shared IP: IP:port columns; the alias list names an IP:port before the IP", () => {
    const items = [
      msg("INVITE", 0, "10.0.0.1:5060", "10.0.0.9:5060"),
      msg("INVITE", 5, "10.0.0.9:5080", "10.0.0.2:5060"),
    ];
    const lookup = aliasLookup([
      { ip: "10.0.0.9", name: "b2bua" },
      { ip: "10.0.0.9", name: "b2bua-out", port: 5080 },
    ]);
    const l = ladderModel(items, { mode: "ipport", lookup, hideDuplicates: true });
    expect(l.columns.map((c) => c.name)).toEqual([
      "10.0.0.1:5060",
      "10.0.0.9:5060 (b2bua)",
      "10.0.0.9:5080 (b2bua-out)",
      "10.0.0.2:5060",
    ]);
    expect(l.arrows.map((a) => [a.from, a.to])).toEqual([
      [0, 1],
      [2, 3],
    ]);
  });
});
