/**
 * Copies of every SIP message the engine sends or receives (docs/LOADGEN.md "HEP mirroring",
 * "trace_msg"): HEP3 over UDP to `hep_addr` (protocol type 1 = SIP, chunk 0x000b; `hep_password`
 * as the auth key, chunk 0x000e) and, with `trace_msg`, a text log in sipp's layout.
 */
import { appendFileSync } from "node:fs";
import { encodeHep3 } from "../hep/index.ts";
import { splitHostPort } from "./options.ts";
import { lakeReport, rawSenderReport, ssrcOf, type MediaAddress } from "./rtcp.ts";

export interface MessageCopy {
  direction: "sent" | "received";
  /** 17 UDP, 6 TCP (TLS included). */
  ipProtocol: number;
  /** The trace's transport word, as sipp writes it (TLS apart from TCP); else from ipProtocol. */
  transport?: "UDP" | "TCP" | "TLS";
  srcIp: string;
  srcPort: number;
  dstIp: string;
  dstPort: number;
  text: string;
}

export interface Mirror {
  copy(m: MessageCopy): void;
  /** RTCP reports of an ended call, both directions (docs/LOADGEN.md "RTCP reports"). */
  rtcp(callId: string, local: MediaAddress, remote: MediaAddress): void;
  close(): void;
  /** HEP packets handed to the socket (the counter tests and stats read). */
  readonly hepSent: number;
}

type UdpSock = import("bun").udp.Socket<"buffer">;

export async function createMirror(opts: {
  hep_addr: string;
  hep_capture_id: number;
  hep_password: string;
  trace_msg: boolean;
  message_file: string;
  hep_raw_rtcp: boolean;
  hep_homer_lake_rtcp: boolean;
}): Promise<Mirror> {
  let sock: UdpSock | undefined;
  let hep: { host: string; port: number } | undefined;
  if (opts.hep_addr) {
    hep = splitHostPort(opts.hep_addr, 9060, "-hep_addr");
    sock = await Bun.udpSocket({ hostname: hep.host.includes(":") ? "::" : "0.0.0.0" });
  }
  let pending = "";
  let flushTimer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    flushTimer = undefined;
    if (pending && opts.message_file) appendFileSync(opts.message_file, pending);
    pending = "";
  };
  const state = { hepSent: 0 };
  return {
    get hepSent() {
      return state.hepSent;
    },
    copy(m) {
      if (sock && hep) {
        const now = Date.now();
        const packet = encodeHep3({
          srcIp: m.srcIp,
          dstIp: m.dstIp,
          srcPort: m.srcPort,
          dstPort: m.dstPort,
          ipProtocol: m.ipProtocol,
          protoType: 1,
          timestampUs: now * 1000 + (performance.now() % 1) * 1000,
          captureId: opts.hep_capture_id,
          ...(opts.hep_password ? { authKey: opts.hep_password } : {}),
          payload: m.text,
        });
        if (sock.send(packet, hep.port, hep.host)) state.hepSent++;
      }
      if (opts.trace_msg) {
        const stamp = new Date().toISOString();
        const proto = m.transport ?? (m.ipProtocol === 17 ? "UDP" : "TCP");
        const arrow = m.direction === "sent" ? `${proto} message sent to ${m.dstIp}:${m.dstPort}` : `${proto} message received from ${m.srcIp}:${m.srcPort}`;
        pending += `----------------------------------------------- ${stamp}\n${arrow}:\n\n${m.text}\n\n`;
        flushTimer ??= setTimeout(flush, 200);
      }
    },
    rtcp(callId, local, remote) {
      if (!sock || !hep || !(opts.hep_raw_rtcp || opts.hep_homer_lake_rtcp)) return;
      const now = Date.now();
      // RTCP runs on the RTP port + 1 (RFC 3550 §11); one report from each side about the other.
      for (const [from, to, side] of [
        [local, remote, "local"],
        [remote, local, "remote"],
      ] as const) {
        const ssrc = ssrcOf(callId, side);
        const source = ssrcOf(callId, side === "local" ? "remote" : "local");
        for (const payload of [opts.hep_raw_rtcp ? rawSenderReport(ssrc, source, now) : null, opts.hep_homer_lake_rtcp ? lakeReport(ssrc, source, now) : null]) {
          if (payload === null) continue;
          const packet = encodeHep3({
            srcIp: from.ip,
            dstIp: to.ip,
            srcPort: from.port + 1,
            dstPort: to.port + 1,
            ipProtocol: 17,
            protoType: 5,
            timestampUs: now * 1000,
            captureId: opts.hep_capture_id,
            correlationId: callId,
            ...(opts.hep_password ? { authKey: opts.hep_password } : {}),
            payload,
          });
          if (sock.send(packet, hep.port, hep.host)) state.hepSent++;
        }
      }
    },
    close() {
      if (flushTimer) clearTimeout(flushTimer);
      flush();
      sock?.close();
    },
  };
}
