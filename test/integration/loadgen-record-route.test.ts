/**
 * The loadgen UAS copies the INVITE's Record-Route into the answers that establish the dialog
 * (RFC 3261 §12.1.1, docs/LOADGEN.md "Built-in scenarios"): without them the caller sends its ACK
 * and BYE straight to the UAS's Contact, past the proxies that record-routed (Kamailio answers such
 * a BYE 404 when it arrives without a Route, test/integration/loadgen-tls-kamailio.test.ts).
 */
import { describe, expect, test } from "bun:test";
import { Engine } from "../../src/loadgen/index.ts";
import { opts } from "./loadgen-harness.ts";
import { parseSipWire, type SipWireMessage } from "../../src/loadgen/sip-wire.ts";
import { waitFor } from "../harness.ts";

describe("loadgen UAS and Record-Route", () => {
  test("the 180 and the 200 of an INVITE carry its Record-Route values in order", async () => {
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
    const engine = new Engine({ opts: opts({ scenario_name: "uas", local_port: 0, total_calls: 1 }), mode: "management" });
    await engine.start();
    try {
      const port = engine.binds[0]!.port;
      const routes = ["<sip:10.0.0.1;lr;ftag=a1>", "<sip:10.0.0.2:5061;transport=tls;lr>"];
      const invite = [
        `INVITE sip:service@127.0.0.1:${port} SIP/2.0`,
        `Record-Route: ${routes[0]}`,
        `Record-Route: ${routes[1]}`,
        `Via: SIP/2.0/UDP 127.0.0.1:${sock.port};branch=z9hG4bK-rr-1`,
        "From: <sip:a@127.0.0.1>;tag=a1",
        "To: <sip:service@127.0.0.1>",
        `Call-ID: rr-${Date.now()}@test`,
        "CSeq: 1 INVITE",
        "Content-Length: 0",
        "",
        "",
      ].join("\r\n");
      sock.send(invite, port, "127.0.0.1");
      const answers = await waitFor("180 and 200", () => {
        const list = [180, 200].map((s) => got.find((m) => m.status === s));
        return list.every((m) => m) ? (list as SipWireMessage[]) : null;
      });
      for (const a of answers) expect(a.headers.get("record-route")).toEqual(routes);
    } finally {
      await engine.stop();
      sock.close();
    }
  });
});
