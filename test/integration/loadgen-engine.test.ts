/**
 * The loadgen engine over real loopback UDP (docs/LOADGEN.md "Engine"): RFC 3261 retransmissions
 * (Timer A for the INVITE, the UAS's 2xx until the ACK, the UAC's ACK for a retransmitted 2xx),
 * -l / -users / -m, the built-in register and options scenarios, and digest answers.
 */
import { describe, expect, test } from "bun:test";
import { Engine } from "../../src/loadgen/index.ts";
import { opts, startUas } from "./loadgen-harness.ts";
import { branchOf, cseqOf, header, parseSipWire, type SipWireMessage } from "../../src/loadgen/sip-wire.ts";
import { waitFor } from "../harness.ts";

/** A bare UDP peer that records what arrives and can answer by hand. */
async function rawPeer() {
  const got: Array<{ msg: SipWireMessage; port: number }> = [];
  const sock = await Bun.udpSocket({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(_s, data, port) {
        const msg = parseSipWire(data.toString());
        if (msg) got.push({ msg, port });
      },
    },
  });
  return {
    got,
    port: sock.port,
    send: (text: string, port: number) => sock.send(text, port, "127.0.0.1"),
    [Symbol.dispose]: () => sock.close(),
  };
}

/** A response to `req` built the way a UAS would, with an optional to-tag and extra headers. */
function answer(req: SipWireMessage, status: string, toTag = "", extra = ""): string {
  const via = (req.headers.get("via") ?? []).map((v) => `Via: ${v}\r\n`).join("");
  const to = header(req, "to") + (toTag ? `;tag=${toTag}` : "");
  return `SIP/2.0 ${status}\r\n${via}From: ${header(req, "from")}\r\nTo: ${to}\r\nCall-ID: ${header(req, "call-id")}\r\nCSeq: ${header(req, "cseq")}\r\n${extra}Content-Length: 0\r\n\r\n`;
}

describe("loadgen engine", () => {
  test("an unanswered INVITE is retransmitted (Timer A) with the same branch and CSeq; a retransmitted 200 is ACKed again", async () => {
    using peer = await rawPeer();
    const engine = new Engine({
      opts: opts({ scenario_name: "uac", remote_addr: `127.0.0.1:${peer.port}`, rate: 1, total_calls: 1 }),
      mode: "load",
    });
    await engine.start();
    try {
      const invites = await waitFor("two INVITEs", () => {
        const list = peer.got.filter((g) => g.msg.method === "INVITE");
        return list.length >= 2 ? list : null;
      });
      const [first, second] = [invites[0]!.msg, invites[1]!.msg];
      expect(branchOf(header(second, "via"))).toBe(branchOf(header(first, "via")));
      expect(header(second, "cseq")).toBe(header(first, "cseq"));
      expect(engine.snapshot().retransmissions).toBeGreaterThanOrEqual(1);
      const ok = answer(first, "200 OK", "uas1", `Contact: <sip:uas@127.0.0.1:${peer.port}>\r\n`);
      peer.send(ok, invites[0]!.port);
      await waitFor("ACK", () => peer.got.some((g) => g.msg.method === "ACK"));
      peer.send(ok, invites[0]!.port);
      const acks = await waitFor("second ACK", () => {
        const list = peer.got.filter((g) => g.msg.method === "ACK");
        return list.length >= 2 ? list : null;
      });
      expect(header(acks[0]!.msg, "to")).toContain("tag=uas1");
      expect(acks[0]!.msg.uri).toBe(`sip:uas@127.0.0.1:${peer.port}`);
      expect(cseqOf(acks[1]!.msg)).toEqual({ num: cseqOf(first).num, method: "ACK" });
      const bye = await waitFor("BYE", () => peer.got.find((g) => g.msg.method === "BYE"));
      peer.send(answer(bye.msg, "200 OK"), bye.port);
      await engine.done;
      expect(engine.snapshot().calls_successful).toBe(1);
    } finally {
      await engine.stop();
    }
  });

  test("the UAS retransmits its 200 until the ACK comes (RFC 3261 §13.3.1.4)", async () => {
    using peer = await rawPeer();
    const engine = new Engine({
      opts: opts({ scenario_name: "uas", local_port: 0, total_calls: 1 }),
      mode: "management",
    });
    await engine.start();
    try {
      const port = engine.binds[0]!.port;
      const invite = [
        `INVITE sip:service@127.0.0.1:${port} SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=z9hG4bK-test-1`,
        `From: <sip:a@127.0.0.1>;tag=a1`,
        `To: <sip:service@127.0.0.1>`,
        `Call-ID: retrans-${Date.now()}@test`,
        `CSeq: 7 INVITE`,
        `Content-Length: 0`,
        ``,
        ``,
      ].join("\r\n");
      peer.send(invite, port);
      const oks = await waitFor("two 200 OK", () => {
        const list = peer.got.filter((g) => g.msg.status === 200);
        return list.length >= 2 ? list : null;
      });
      expect(oks[1]!.msg.raw).toBe(oks[0]!.msg.raw);
      expect(peer.got.find((g) => g.msg.status === 180)).toBeDefined();
      const toTag = /tag=([^;]+)/.exec(header(oks[0]!.msg, "to"))![1];
      const dialog = (method: string, cseq: number) =>
        invite
          .replace(/^INVITE/, method)
          .replace("CSeq: 7 INVITE", `CSeq: ${cseq} ${method}`)
          .replace("To: <sip:service@127.0.0.1>", `To: <sip:service@127.0.0.1>;tag=${toTag}`)
          .replace("z9hG4bK-test-1", `z9hG4bK-test-${method}`);
      peer.send(dialog("ACK", 7), port);
      peer.send(dialog("BYE", 8), port);
      await engine.done;
      const s = engine.snapshot();
      expect(s.calls_successful).toBe(1);
      expect(s.retransmissions).toBeGreaterThanOrEqual(1);
      expect(peer.got.some((g) => g.msg.status === 200 && cseqOf(g.msg).method === "BYE")).toBe(true);
    } finally {
      await engine.stop();
    }
  });

  test("-l caps concurrent calls and -m stops after that many", async () => {
    const uas = await startUas();
    try {
      const uac = new Engine({
        opts: opts({
          scenario_name: "uac",
          remote_addr: `127.0.0.1:${uas.binds[0]!.port}`,
          rate: 200,
          max_concurrent: 3,
          total_calls: 12,
          pause_ms: 60,
        }),
        mode: "load",
      });
      await uac.start();
      await uac.done;
      const s = uac.snapshot();
      expect(s.calls_created).toBe(12);
      expect(s.calls_successful).toBe(12);
      expect(s.calls_peak).toBe(3);
    } finally {
      await uas.stop();
    }
  });

  test("-users keeps that many calls running until -m", async () => {
    const uas = await startUas();
    try {
      const uac = new Engine({
        opts: opts({
          scenario_name: "uac",
          remote_addr: `127.0.0.1:${uas.binds[0]!.port}`,
          users: 4,
          total_calls: 10,
          pause_ms: 20,
        }),
        mode: "load",
      });
      await uac.start();
      expect(uac.snapshot().calls_current).toBe(4);
      await uac.done;
      const s = uac.snapshot();
      expect(s.calls_successful).toBe(10);
      expect(s.calls_peak).toBe(4);
    } finally {
      await uas.stop();
    }
  });

  test("register and options scenarios against a loadgen listener", async () => {
    const uas = await startUas();
    try {
      for (const scenario of ["options", "register"]) {
        const client = new Engine({
          opts: opts({
            scenario_name: scenario,
            remote_addr: `127.0.0.1:${uas.binds[0]!.port}`,
            rate: 100,
            total_calls: 5,
          }),
          mode: "load",
        });
        await client.start();
        await client.done;
        expect(client.snapshot().calls_successful).toBe(5);
      }
      expect(uas.snapshot().requests_answered).toBe(10);
    } finally {
      await uas.stop();
    }
  });

  test("a 486 fails the call with its status and the non-2xx ACK keeps the INVITE's branch", async () => {
    using peer = await rawPeer();
    const engine = new Engine({
      opts: opts({ scenario_name: "uac", remote_addr: `127.0.0.1:${peer.port}`, rate: 1, total_calls: 1 }),
      mode: "load",
    });
    await engine.start();
    try {
      const inv = await waitFor("INVITE", () => peer.got.find((g) => g.msg.method === "INVITE"));
      peer.send(answer(inv.msg, "486 Busy Here", "b1"), inv.port);
      const ack = await waitFor("ACK", () => peer.got.find((g) => g.msg.method === "ACK"));
      expect(branchOf(header(ack.msg, "via"))).toBe(branchOf(header(inv.msg, "via")));
      await engine.done;
      expect(engine.snapshot().failed_reasons).toEqual({ "status 486": 1 });
    } finally {
      await engine.stop();
    }
  });
});
