/**
 * The server side of the built-in `uas` scenario (docs/LOADGEN.md "Built-in scenarios"):
 * INVITE → 180 → 200 (SDP, retransmitted until ACK, RFC 3261 §13.3.1.4) → ACK → BYE → 200.
 * Retransmitted requests get the last answer again (§17.2.1, §17.2.2); CANCEL gets 200 and the
 * INVITE 487 (§9.2).
 */
import { RetransmitTimer, token, type CallHost, type Leg, type Peer, type SipCall } from "./call-host.ts";
import { contactParam } from "./uac.ts";
import { audioAddress, type MediaAddress } from "./rtcp.ts";
import { buildResponse, cseqOf, sdpBody, type SipWireMessage } from "./sip-wire.ts";

/**
 * The answer to a request outside every call: OPTIONS, REGISTER, MESSAGE… get 200 (a listener that
 * answers pings); an unknown dialog 481 (RFC 3261 §12.2.2); an INVITE to a client engine 603.
 */
export function outOfDialogAnswer(method: string): { status: number; reason: string } {
  if (method === "INVITE") return { status: 603, reason: "Decline" };
  if (method === "BYE" || method === "CANCEL") return { status: 481, reason: "Call/Transaction Does Not Exist" };
  return { status: 200, reason: "OK" };
}

export class ServerCall implements SipCall {
  readonly callId: string;
  private readonly toTag = token();
  private inviteCseq = 0;
  private inviteResponse = "";
  private timer: RetransmitTimer | undefined;
  private state: "answering" | "confirmed" | "canceled" | "done" = "answering";
  /** Last answer per "CSeq number method" of a non-INVITE request, for its retransmissions. */
  private readonly answered = new Map<string, string>();
  private remoteMedia: MediaAddress | null = null;
  private localIp = "";
  /** ACK → BYE times (docs/LOADGEN.md "Media and RTCP reports"). */
  private ackAt = 0;
  private byeAt = 0;

  constructor(
    private readonly host: CallHost,
    invite: SipWireMessage,
    /** This call's audio port (call-host.ts mediaPort). */
    private readonly mediaPort: number,
  ) {
    this.callId = invite.headers.get("call-id")?.[0] ?? "";
  }

  onMessage(msg: SipWireMessage, from: Peer, leg: Leg): void {
    if (!msg.method) {
      this.host.stats.unexpected_messages++;
      return;
    }
    const cs = cseqOf(msg);
    const reply = (text: string) => leg.send(text, from.host, from.port);
    switch (msg.method) {
      case "INVITE": {
        if (this.inviteResponse && cs.num === this.inviteCseq) return reply(this.inviteResponse);
        if (this.inviteResponse) {
          // A re-INVITE in the dialog: accept it with the same answer, no new call.
          return reply(
            buildResponse(msg, 200, "OK", this.toTag, this.contact(leg), sdpBody(leg.ip, this.mediaPort, 1)),
          );
        }
        this.inviteCseq = cs.num;
        this.remoteMedia = audioAddress(msg.body);
        this.localIp = leg.ip;
        // §12.1.1: the answers that establish the (early) dialog copy every Record-Route, in order,
        // or the caller's ACK and BYE bypass the proxies that asked to stay on the path.
        const rr = (msg.headers.get("record-route") ?? []).map((v): [string, string] => ["Record-Route", v]);
        reply(buildResponse(msg, 180, "Ringing", this.toTag, rr));
        this.answerInvite(
          buildResponse(
            msg,
            200,
            "OK",
            this.toTag,
            [...rr, ...this.contact(leg), ["Content-Type", "application/sdp"]],
            sdpBody(leg.ip, this.mediaPort, 1),
          ),
          reply,
          leg.reliable,
        );
        return;
      }
      case "ACK": {
        if (cs.num !== this.inviteCseq) return;
        this.timer?.stop();
        if (this.state === "canceled") return this.finish(false, "canceled");
        if (this.state === "answering") {
          this.state = "confirmed";
          this.ackAt = performance.now();
        }
        return;
      }
      case "CANCEL": {
        reply(buildResponse(msg, 200, "OK", this.toTag));
        if (this.state !== "answering") return;
        this.state = "canceled";
        this.timer?.stop();
        const invite = this.inviteResponse.replace(/^SIP\/2\.0 200 OK/, "SIP/2.0 487 Request Terminated");
        this.answerInvite(
          invite
            .replace(/\r\n\r\n[\s\S]*$/, "\r\n\r\n")
            .replace(/^Content-Length: \d+/m, "Content-Length: 0")
            .replace(/^Content-Type: .*\r\n/m, ""),
          reply,
          leg.reliable,
        );
        return;
      }
      default: {
        const key = `${cs.num} ${cs.method}`;
        const again = this.answered.get(key);
        if (again) return reply(again);
        const text = buildResponse(msg, 200, "OK", this.toTag);
        this.answered.set(key, text);
        reply(text);
        if (msg.method === "BYE" && this.state !== "done") this.byeAt = performance.now();
        if (msg.method === "BYE" && this.state !== "done")
          this.finish(this.state === "confirmed" || this.state === "answering", "");
      }
    }
  }

  private contact(leg: Leg): Array<[string, string]> {
    const host = leg.ip.includes(":") ? `[${leg.ip}]` : leg.ip;
    return [["Contact", `<sip:loadgen@${host}:${leg.port}${contactParam(leg)}>`]];
  }

  /** §13.3.1.4: the 2xx (and here the 487 too) is retransmitted at T1, doubling to T2, until the ACK, for 64·T1. */
  private answerInvite(text: string, reply: (t: string) => void, reliable: boolean): void {
    this.inviteResponse = text;
    reply(text);
    const { t1, t2, stats, opts } = this.host;
    this.timer = new RetransmitTimer(
      () => {
        stats.retransmissions++;
        reply(text);
      },
      t1,
      t2,
      64 * t1,
      () => this.finish(false, "no ACK"),
      // Stream transports carry the 2xx reliably hop by hop; sipp does not retransmit it there either.
      opts.no_retrans || reliable,
    );
  }

  private finish(ok: boolean, reason: string): void {
    if (this.state === "done") return;
    this.state = "done";
    this.dispose();
    this.host.callEnded(this.callId, ok, reason);
  }

  mediaPair() {
    if (!this.remoteMedia) return null;
    // The answer is this side's own SDP (always PCMU); media flowed from the ACK to the BYE (0 without an ACK).
    return {
      local: { ip: this.localIp, port: this.mediaPort },
      remote: this.remoteMedia,
      answerSdp: sdpBody(this.localIp, this.mediaPort, 1),
      mediaMs: this.ackAt ? this.byeAt - this.ackAt : 0,
    };
  }

  dispose(): void {
    this.timer?.stop();
  }
}
