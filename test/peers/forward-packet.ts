import { encodeHep3 } from "../../src/hep/index.ts";
import { invite } from "../fixtures/sip.ts";

/** An INVITE of Call-ID `callId` as HEP3, with an agent timestamp (so edge and central store the same time). */
export const forwardPacket = (callId: string, i: number) =>
  encodeHep3({
    srcIp: "10.9.0.1",
    dstIp: "10.9.0.2",
    srcPort: 5060,
    dstPort: 5060,
    ipProtocol: 17,
    timestampUs: Date.now() * 1000 + i,
    protoType: 1,
    captureId: 9,
    payload: invite({ callId, from: "fwa", to: "fwb" }),
  });
