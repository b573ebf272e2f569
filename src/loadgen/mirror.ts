/**
 * Copies of every SIP message the engine sends or receives (docs/LOADGEN.md "HEP mirroring",
 * "trace_msg"): HEP3 over UDP to `hep_addr` (protocol type 1 = SIP, chunk 0x000b; `hep_password`
 * as the auth key, chunk 0x000e) and, with `trace_msg`, a text log in sipp's layout; with
 * `trace_logs`, the `<log>` actions of -sf scenarios in sipp's log-file layout.
 */
import { appendFileSync } from "node:fs";
import { encodeHep3 } from "../hep/index.ts";
import { hepClock } from "./hep-clock.ts";
import { splitHostPort, type LoadgenOptions } from "./options.ts";
import { mediaReportPackets, type MediaSession } from "./media-report.ts";
import { lakeReport, rawSenderReport, streamSsrc, type MediaAddress } from "./rtcp.ts";

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
  /** RTCP reports of an ended call, both directions (docs/LOADGEN.md "Media and RTCP reports"). */
  rtcp(callId: string, local: MediaAddress, remote: MediaAddress): void;
  /** Media quality reports (HEP 34) of an ended call with `send_media_report` (docs/LOADGEN.md "Media and RTCP reports"). */
  mediaReport(callId: string, media: MediaSession): void;
  close(): void;
  /** A scenario `<log>` line, written to `log_file` with `trace_logs` (docs/LOADGEN.md "Scenario actions and variables"). */
  note(line: string): void;
  /** HEP packets handed to the socket (the counter tests and stats read). */
  readonly hepSent: number;
}

/** Copies one message when mirroring is on; an address the HEP encoder cannot write (a name instead of an IP) only costs the copy. */
export function copyMessage(
  mirror: Mirror | undefined,
  direction: "sent" | "received",
  transport: "UDP" | "TCP" | "TLS",
  srcIp: string,
  srcPort: number,
  dstIp: string,
  dstPort: number,
  text: string,
): void {
  if (!mirror) return;
  try {
    mirror.copy({
      direction,
      ipProtocol: transport === "UDP" ? 17 : 6,
      transport,
      srcIp,
      srcPort,
      dstIp,
      dstPort,
      text,
    });
  } catch {
    // counted nowhere: the SIP exchange itself is unaffected
  }
}

type UdpSock = import("bun").udp.Socket<"buffer">;

/** The options of the mirror: where HEP copies go, the trace files, which media reports are sent. */
export type MirrorOptions = Pick<
  LoadgenOptions,
  | "hep_addr"
  | "hep_capture_id"
  | "hep_password"
  | "trace_msg"
  | "message_file"
  | "trace_logs"
  | "log_file"
  | "hep_raw_rtcp"
  | "hep_homer_lake_rtcp"
  | "send_media_report"
>;

export async function createMirror(opts: MirrorOptions): Promise<Mirror> {
  let sock: UdpSock | undefined;
  let hep: { host: string; port: number } | undefined;
  if (opts.hep_addr) {
    hep = splitHostPort(opts.hep_addr, 9060, "-hep_addr");
    sock = await Bun.udpSocket({ hostname: hep.host.includes(":") ? "::" : "0.0.0.0" });
  }
  let pending = "";
  let logPending = "";
  let flushTimer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    flushTimer = undefined;
    if (pending && opts.message_file) appendFileSync(opts.message_file, pending);
    if (logPending && opts.log_file) appendFileSync(opts.log_file, logPending);
    pending = "";
    logPending = "";
  };
  const state = { hepSent: 0 };
  return {
    get hepSent() {
      return state.hepSent;
    },
    copy(m) {
      if (sock && hep) {
        // Stamped when the message is sent or received (before the engine answers it): wire order.
        const packet = encodeHep3({
          srcIp: m.srcIp,
          dstIp: m.dstIp,
          srcPort: m.srcPort,
          dstPort: m.dstPort,
          ipProtocol: m.ipProtocol,
          protoType: 1,
          timestampUs: hepClock.next(),
          captureId: opts.hep_capture_id,
          ...(opts.hep_password ? { authKey: opts.hep_password } : {}),
          payload: m.text,
        });
        if (sock.send(packet, hep.port, hep.host)) state.hepSent++;
      }
      if (opts.trace_msg) {
        const stamp = new Date().toISOString();
        const proto = m.transport ?? (m.ipProtocol === 17 ? "UDP" : "TCP");
        const arrow =
          m.direction === "sent"
            ? `${proto} message sent to ${m.dstIp}:${m.dstPort}`
            : `${proto} message received from ${m.srcIp}:${m.srcPort}`;
        pending += `----------------------------------------------- ${stamp}\n${arrow}:\n\n${m.text}\n\n`;
        flushTimer ??= setTimeout(flush, 200);
      }
    },
    note(line) {
      if (!opts.trace_logs) return;
      // sipp's log line: date, time and epoch seconds (microseconds), then the text.
      const now = Date.now();
      const iso = new Date(now).toISOString();
      logPending += `${iso.slice(0, 10)}\t${iso.slice(11, 23)}000\t${(now / 1000).toFixed(6)}: ${line}\n`;
      flushTimer ??= setTimeout(flush, 200);
    },
    rtcp(callId, local, remote) {
      if (!sock || !hep || !(opts.hep_raw_rtcp || opts.hep_homer_lake_rtcp)) return;
      const now = Date.now();
      // RTCP runs on the RTP port + 1 (RFC 3550 §11); one report from each side about the other.
      // SSRCs by stream sender (rtcp.ts streamSsrc): the other end's reports of a stream carry the same.
      for (const [from, to] of [
        [local, remote],
        [remote, local],
      ] as const) {
        const ssrc = streamSsrc(callId, from);
        const source = streamSsrc(callId, to);
        for (const payload of [
          opts.hep_raw_rtcp ? rawSenderReport(ssrc, source, now) : null,
          opts.hep_homer_lake_rtcp ? lakeReport(ssrc, source, now) : null,
        ]) {
          if (payload === null) continue;
          const packet = encodeHep3({
            srcIp: from.ip,
            dstIp: to.ip,
            srcPort: from.port + 1,
            dstPort: to.port + 1,
            ipProtocol: 17,
            protoType: 5,
            timestampUs: hepClock.next(),
            captureId: opts.hep_capture_id,
            correlationId: callId,
            ...(opts.hep_password ? { authKey: opts.hep_password } : {}),
            payload,
          });
          if (sock.send(packet, hep.port, hep.host)) state.hepSent++;
        }
      }
    },
    mediaReport(callId, media) {
      if (!sock || !hep || !opts.send_media_report) return;
      for (const packet of mediaReportPackets(
        callId,
        media,
        { captureId: opts.hep_capture_id, authKey: opts.hep_password },
        Date.now(),
      )) {
        if (sock.send(packet, hep.port, hep.host)) state.hepSent++;
      }
    },
    close() {
      if (flushTimer) clearTimeout(flushTimer);
      flush();
      sock?.close();
    },
  };
}
