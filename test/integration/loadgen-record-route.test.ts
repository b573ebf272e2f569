/**
 * Record-Route at the loadgen's UAS side. The built-in UAS copies the INVITE's Record-Route into the answers that establish the dialog
 * (RFC 3261 §12.1.1, docs/LOADGEN.md "Built-in scenarios"): without them the caller sends its ACK
 * and BYE straight to the UAS's Contact, past the proxies that record-routed (Kamailio answers such
 * a BYE 404 when it arrives without a Route, test/integration/loadgen-tls-kamailio.test.ts). A
 * scenario file's `<recv rrs="true">` keeps the INVITE's route set and Contact for a BYE the UAS
 * sends after the ACK (docs/LOADGEN.md "Scenario files").
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Engine } from "../../src/loadgen/index.ts";
import { opts } from "./loadgen-harness.ts";
import { parseSipWire, type SipWireMessage } from "../../src/loadgen/sip-wire.ts";
import { waitFor } from "../harness.ts";

/** A bare UDP peer that records what arrives. */
async function rawPeer() {
  const got: SipWireMessage[] = [];
  const sock = await Bun.udpSocket({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(_s, data) {
        const msg = parseSipWire(data.toString());
        if (msg) got.push(msg);
      },
    },
  });
  return { got, sock, [Symbol.dispose]: () => sock.close() };
}

const ROUTES = ["<sip:10.0.0.1;lr;ftag=a1>", "<sip:10.0.0.2:5061;transport=tls;lr>"];

/** An INVITE (or an in-dialog request of it) from the raw peer to `port`. */
function request(method: string, port: number, peerPort: number, callId: string, extra: string[]): string {
  return [
    `${method} sip:service@127.0.0.1:${port} SIP/2.0`,
    ...extra,
    `Via: SIP/2.0/UDP 127.0.0.1:${peerPort};branch=z9hG4bK-rr-${method}`,
    "From: <sip:a@127.0.0.1>;tag=a1",
    "To: <sip:service@127.0.0.1>",
    `Call-ID: ${callId}`,
    `CSeq: 1 ${method}`,
    "Content-Length: 0",
    "",
    "",
  ].join("\r\n");
}

describe("loadgen UAS and Record-Route", () => {
  test("the 180 and the 200 of an INVITE carry its Record-Route values in order", async () => {
    using peer = await rawPeer();
    const { got, sock } = peer;
    const engine = new Engine({
      opts: opts({ scenario_name: "uas", local_port: 0, total_calls: 1 }),
      mode: "management",
    });
    await engine.start();
    try {
      const port = engine.binds[0]!.port;
      sock.send(
        request(
          "INVITE",
          port,
          sock.port,
          `rr-${Date.now()}@test`,
          ROUTES.map((r) => `Record-Route: ${r}`),
        ),
        port,
        "127.0.0.1",
      );
      const answers = await waitFor("180 and 200", () => {
        const list = [180, 200].map((s) => got.find((m) => m.status === s));
        return list.every((m) => m) ? (list as SipWireMessage[]) : null;
      });
      for (const a of answers) expect(a.headers.get("record-route")).toEqual(ROUTES);
    } finally {
      await engine.stop();
    }
  });

  test('a scenario UAS with <recv request="INVITE" rrs="true"> sends its BYE to the INVITE\'s Contact with the route set in order', async () => {
    using peer = await rawPeer();
    const { got, sock } = peer;
    const scenario = join(import.meta.dir, "../fixtures/loadgen/uas-hangs-up.xml");
    const engine = new Engine({
      opts: opts({ scenario_file: scenario, local_port: 0, total_calls: 1 }),
      mode: "management",
    });
    await engine.start();
    try {
      const port = engine.binds[0]!.port;
      const callId = `rrs-${Date.now()}@test`;
      const contact = `<sip:caller@127.0.0.1:${sock.port};transport=tls>`;
      sock.send(
        request("INVITE", port, sock.port, callId, [...ROUTES.map((r) => `Record-Route: ${r}`), `Contact: ${contact}`]),
        port,
        "127.0.0.1",
      );
      const ok = await waitFor("200", () => got.find((m) => m.status === 200));
      const toTag = /;tag=([^;>]+)$/.exec(ok.headers.get("to")![0]!)![1]!;
      // The ACK carries neither Record-Route nor Contact: the BYE must come from what the INVITE said.
      sock.send(
        request("ACK", port, sock.port, callId, []).replace(
          "To: <sip:service@127.0.0.1>",
          `To: <sip:service@127.0.0.1>;tag=${toTag}`,
        ),
        port,
        "127.0.0.1",
      );
      const bye = await waitFor("BYE", () => got.find((m) => m.method === "BYE"));
      expect(bye.uri).toBe(`sip:caller@127.0.0.1:${sock.port};transport=tls`);
      expect(bye.headers.get("route")).toEqual([ROUTES.join(", ")]);
    } finally {
      await engine.stop();
    }
  });
});
