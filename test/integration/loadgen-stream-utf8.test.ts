/**
 * UTF-8 on loadgen's stream transports (docs/LOADGEN.md "Engine"): each TCP/TLS connection decodes
 * its own bytes, so a character split across two reads (a TLS record or TCP segment boundary) is
 * put together again even when another connection's data arrives in between.
 */
import { describe, expect, test } from "bun:test";
import type { Socket } from "bun";
import { Engine } from "../../src/loadgen/index.ts";
import { opts } from "./loadgen-harness.ts";
import { header, parseSipWire, type SipWireMessage } from "../../src/loadgen/sip-wire.ts";
import { waitFor } from "../harness.ts";

/** A raw TCP client that collects the SIP messages it receives (one per read is enough here). */
async function client(port: number) {
  const got: SipWireMessage[] = [];
  const sock: Socket = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data(_s, data) {
        const m = parseSipWire(new TextDecoder().decode(data));
        if (m) got.push(m);
      },
    },
  });
  sock.setNoDelay(true);
  return { got, sock, port: sock.localPort };
}

function options(fromName: string, localPort: number, callId: string): Buffer {
  return Buffer.from(
    [
      "OPTIONS sip:service@127.0.0.1 SIP/2.0",
      `Via: SIP/2.0/TCP 127.0.0.1:${localPort};branch=z9hG4bK-${callId}`,
      `From: "${fromName}" <sip:a@127.0.0.1>;tag=a1`,
      "To: <sip:service@127.0.0.1>",
      `Call-ID: ${callId}`,
      "CSeq: 1 OPTIONS",
      "Content-Length: 0",
      "",
      "",
    ].join("\r\n"),
  );
}

describe("loadgen stream transports and UTF-8", () => {
  test("a character split across reads of one connection survives another connection's data in between", async () => {
    const uas = new Engine({
      opts: opts({ scenario_name: "uas", listeners: [{ transport: "t1", local_ip: "127.0.0.1", local_port: 0 }] }),
      mode: "management",
    });
    await uas.start();
    const a = await client(uas.binds[0]!.port);
    const b = await client(uas.binds[0]!.port);
    try {
      const msgA = options("José Müller", a.port, `utf8-a-${Date.now()}`);
      const cut = msgA.indexOf(Buffer.from("é")) + 1; // after the first of é's two bytes
      a.sock.write(msgA.subarray(0, cut));
      // A pause so the listener reads A's first part before B's message arrives (were it slower, the
      // test would only lose its power to catch the fault, never fail wrongly).
      await Bun.sleep(50);
      b.sock.write(options("Bob", b.port, `utf8-b-${Date.now()}`));
      await waitFor("B's 200", () => b.got.find((m) => m.status === 200));
      a.sock.write(msgA.subarray(cut));
      const ok = await waitFor("A's 200", () => a.got.find((m) => m.status === 200));
      expect(header(ok, "from")).toBe('"José Müller" <sip:a@127.0.0.1>;tag=a1');
      expect(header(b.got.find((m) => m.status === 200)!, "cseq")).toBe("1 OPTIONS");
      expect(uas.snapshot().requests_answered).toBe(2);
    } finally {
      a.sock.end();
      b.sock.end();
      await uas.stop();
    }
  });
});
