import { describe, expect, test } from "bun:test";
import { Defender, LANES, LIVES, classify } from "./game.ts";

const sip = (method: string, code = "") => ({
  ts: 0,
  proto: 1,
  sip: {
    method,
    resp_code: code,
    resp_text: code ? "Busy Here" : "",
    callid: "c",
    cseq: "1 INVITE",
    from_user: "a",
    to_user: "b",
  },
});

describe("Packet Defender", () => {
  test("failures (4xx-6xx) are hostile, requests and other responses pass, RTCP passes, RTP is ignored", () => {
    expect(classify(sip("INVITE"))).toEqual({ label: "INVITE", hostile: false });
    expect(classify(sip("", "486"))).toEqual({ label: "486 Busy Here", hostile: true });
    expect(classify(sip("", "399"))).toEqual({ label: "399 Busy Here", hostile: false });
    expect(classify({ ts: 0, proto: 5 })).toEqual({ label: "RTCP", hostile: false });
    expect(classify({ ts: 0, proto: 6 })).toBeUndefined();
  });

  test("a shot in the packet's lane removes it and scores; a failure reaching the firewall costs a life", () => {
    const g = new Defender();
    g.add("486 Busy Here", true);
    const p = g.packets[0]!;
    expect(p.lane).toBeGreaterThanOrEqual(0);
    expect(p.lane).toBeLessThan(LANES);
    while (g.lane !== p.lane) g.moveLane(g.lane < p.lane ? 1 : -1);
    g.fire();
    for (let t = 0; t < 2000 && g.packets.length; t += 16) g.step(16);
    expect([g.shotHostile, g.score, g.lives]).toEqual([1, 10, LIVES]);
    g.add("503 Service Unavailable", true);
    g.add("200 OK", false);
    for (let t = 0; t < 8000; t += 16) g.step(16);
    expect([g.breached, g.delivered, g.lives, g.score]).toEqual([1, 1, LIVES - 1, 11]);
  });

  test("packets of one lane queue behind each other; the game ends with the last life", () => {
    const g = new Defender();
    for (let i = 0; i < 40; i++) g.add("486 Busy Here", true);
    const lanes = new Map<number, number[]>();
    for (const p of g.packets) lanes.set(p.lane, [...(lanes.get(p.lane) ?? []), p.x]);
    for (const xs of lanes.values())
      for (let i = 1; i < xs.length; i++) expect(xs[i]! - xs[i - 1]!).toBeGreaterThanOrEqual(0.32 - 1e-9);
    expect(g.dropped).toBe(40 - g.packets.length);
    for (let t = 0; t < 60_000 && !g.over; t += 16) g.step(16);
    expect(g.over).toBe(true);
    g.add("INVITE", false);
    expect(g.seen).toBe(40);
  });
});
