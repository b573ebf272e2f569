/**
 * The client side of the built-in scenarios (docs/LOADGEN.md "Built-in scenarios"):
 * `uac` INVITE → (1xx) → 200 → ACK → pause `-d` → BYE → 200, `register` and `options` one
 * transaction each. A 401/407 is answered once with digest credentials (RFC 3261 §22.2).
 */
import { newBranch, RetransmitTimer, token, type CallHost, type Leg, type Peer, type SipCall } from "./call-host.ts";
import { digestAuthorization, parseDigestChallenge } from "./digest.ts";
import { audioAddress, type MediaAddress } from "./rtcp.ts";
import { buildSip, cseqOf, header, sdpBody, tagOf, uriOf, type SipWireMessage } from "./sip-wire.ts";

export type ClientScenario = "uac" | "register" | "options";

interface ClientTx {
  method: string;
  cseq: number;
  branch: string;
  text: string;
  timer: RetransmitTimer;
}

/** RFC 3261 §19.1.1: a Contact reachable over a stream says which one. */
export const contactParam = (leg: Leg) => (leg.transport === "UDP" ? "" : `;transport=${leg.transport.toLowerCase()}`);

const hostPort = (p: Peer) => (p.host.includes(":") ? `[${p.host}]:${p.port}` : `${p.host}:${p.port}`);

export class ClientCall implements SipCall {
  readonly callId: string;
  private readonly fromTag = token();
  private toTag = "";
  private cseq = 0;
  private tx: ClientTx | undefined;
  private ackText = "";
  private routeSet: string[] = [];
  private remoteTarget: string;
  private readonly requestUri: string;
  private readonly fromUri: string;
  private readonly toUri: string;
  private authTries = 0;
  private state: "calling" | "confirmed" | "closing" | "done" = "calling";
  private readonly startedAt = performance.now();
  private pauseTimer: ReturnType<typeof setTimeout> | undefined;
  private recvTimer: ReturnType<typeof setTimeout> | undefined;
  private remoteMedia: MediaAddress | null = null;
  /** The 200's SDP and the ACK → BYE times (docs/LOADGEN.md "Media and RTCP reports"). */
  private answerSdp = "";
  private ackAt = 0;
  private byeAt = 0;
  /** Time to the final answer of the first request (the INVITE's 200 for `uac`). */
  private responseMs: number | undefined;

  constructor(
    private readonly host: CallHost,
    private readonly scenario: ClientScenario,
    readonly leg: Leg,
    private readonly remote: Peer,
    /** This call's audio port (call-host.ts mediaPort). */
    private readonly mediaPort: number,
  ) {
    this.callId = `${token()}-${process.pid}@${leg.ip}`;
    const service = host.opts.service;
    const local = hostPort({ host: leg.ip, port: leg.port });
    if (scenario === "register") {
      const user = host.opts.auth_username || service;
      this.requestUri = `sip:${remote.host.includes(":") ? `[${remote.host}]` : remote.host}`;
      this.fromUri = `sip:${user}@${remote.host.includes(":") ? `[${remote.host}]` : remote.host}`;
      this.toUri = this.fromUri;
    } else {
      this.requestUri = `sip:${service}@${hostPort(remote)}`;
      this.fromUri = `sip:loadgen@${local}`;
      this.toUri = this.requestUri;
    }
    this.remoteTarget = this.requestUri;
  }

  start(): void {
    const method = this.scenario === "uac" ? "INVITE" : this.scenario === "register" ? "REGISTER" : "OPTIONS";
    if (this.host.opts.recv_timeout_ms > 0)
      this.recvTimer = setTimeout(() => this.finish(false, "recv_timeout"), this.host.opts.recv_timeout_ms);
    this.sendRequest(method, []);
  }

  private send(text: string): void {
    this.leg.send(text, this.remote.host, this.remote.port);
  }

  private build(method: string, uri: string, branch: string, cseq: number, extra: Array<[string, string]>): string {
    const local = hostPort({ host: this.leg.ip, port: this.leg.port });
    const headers: Array<[string, string]> = [
      ["Via", `SIP/2.0/${this.leg.transport} ${local};branch=${branch};rport`],
      ["Max-Forwards", "70"],
      ["From", `<${this.fromUri}>;tag=${this.fromTag}`],
      ["To", this.toTag ? `<${this.toUri}>;tag=${this.toTag}` : `<${this.toUri}>`],
      ["Call-ID", this.callId],
      ["CSeq", `${cseq} ${method}`],
    ];
    for (const r of this.routeSet) headers.push(["Route", r]);
    if (method === "INVITE" || method === "REGISTER")
      headers.push(["Contact", `<sip:loadgen@${local}${contactParam(this.leg)}>`]);
    if (method === "REGISTER") headers.push(["Expires", "3600"]);
    headers.push(["User-Agent", "svc-loadgen"], ...extra);
    if (method === "INVITE") {
      headers.push(["Content-Type", "application/sdp"]);
      return buildSip(`${method} ${uri} SIP/2.0`, headers, sdpBody(this.leg.ip, this.mediaPort, this.cseq || 1));
    }
    return buildSip(`${method} ${uri} SIP/2.0`, headers);
  }

  /** A new client transaction (§17.1): INVITE uses Timer A/B, the others Timer E/F. */
  private sendRequest(method: string, extra: Array<[string, string]>): void {
    this.cseq++;
    const uri =
      method === "INVITE" || method === "REGISTER" || method === "OPTIONS" ? this.requestUri : this.remoteTarget;
    const branch = newBranch();
    const text = this.build(method, uri, branch, this.cseq, extra);
    const { t1, t2, opts, stats } = this.host;
    const resend = () => {
      stats.retransmissions++;
      this.send(text);
    };
    const timer = new RetransmitTimer(
      resend,
      t1,
      method === "INVITE" ? Number.POSITIVE_INFINITY : t2,
      64 * t1,
      () => this.finish(false, "timeout"),
      opts.no_retrans || this.leg.reliable,
    );
    this.tx?.timer.stop();
    this.tx = { method, cseq: this.cseq, branch, text, timer };
    this.send(text);
  }

  onMessage(msg: SipWireMessage, from: Peer, leg: Leg): void {
    if (msg.method) return this.onRequest(msg, from, leg);
    const cs = cseqOf(msg);
    const tx = this.tx;
    if (
      cs.method === "INVITE" &&
      msg.status >= 200 &&
      msg.status < 300 &&
      this.ackText &&
      (tx?.method !== "INVITE" || tx.cseq !== cs.num)
    ) {
      // §13.2.2.4: a retransmitted 2xx is answered with the same ACK again.
      this.send(this.ackText);
      return;
    }
    if (!tx || this.state === "done" || cs.num !== tx.cseq || cs.method !== tx.method) {
      this.host.stats.unexpected_messages++;
      return;
    }
    if (msg.status < 200) {
      if (tx.method === "INVITE") tx.timer.stop();
      else tx.timer.slowTo(this.host.t2);
      return;
    }
    tx.timer.stop();
    this.tx = undefined;
    if (tx.method === "INVITE") return this.onInviteFinal(msg, tx);
    if ((msg.status === 401 || msg.status === 407) && tx.method !== "BYE" && this.retryWithAuth(msg, tx)) return;
    if (tx.method === "BYE") return this.finish(msg.status < 300, msg.status < 300 ? "" : `BYE status ${msg.status}`);
    this.finish(msg.status < 300, msg.status < 300 ? "" : `status ${msg.status}`, performance.now() - this.startedAt);
  }

  private onInviteFinal(msg: SipWireMessage, tx: ClientTx): void {
    if (msg.status >= 300) {
      // §17.1.1.3: the ACK of a non-2xx final answer belongs to the INVITE transaction (same branch).
      const to = header(msg, "to");
      const ack = this.build("ACK", this.requestUri, tx.branch, tx.cseq, []).replace(/^To: .*$/m, `To: ${to}`);
      this.send(ack);
      if ((msg.status === 401 || msg.status === 407) && this.retryWithAuth(msg, tx)) return;
      return this.finish(false, `status ${msg.status}`, performance.now() - this.startedAt);
    }
    // §12.1.2: the dialog takes the remote tag, target (Contact) and the reversed Record-Route.
    this.toTag = tagOf(header(msg, "to"));
    const contact = header(msg, "contact");
    if (contact) this.remoteTarget = uriOf(contact);
    this.routeSet = [...(msg.headers.get("record-route") ?? [])].reverse();
    this.remoteMedia = audioAddress(msg.body);
    this.answerSdp = msg.body;
    this.ackText = this.build("ACK", this.remoteTarget, newBranch(), tx.cseq, []);
    this.send(this.ackText);
    this.state = "confirmed";
    this.ackAt = performance.now();
    this.responseMs = performance.now() - this.startedAt;
    this.pauseTimer = setTimeout(() => {
      this.state = "closing";
      this.byeAt = performance.now();
      this.sendRequest("BYE", []);
    }, this.host.opts.pause_ms);
  }

  /** One authenticated retry per call; the credentials default to `-s` and "password" like sipp. */
  private retryWithAuth(msg: SipWireMessage, tx: ClientTx): boolean {
    this.host.stats.auth_challenges++;
    if (this.authTries++ > 0) return false;
    const proxy = msg.status === 407;
    const ch = parseDigestChallenge(header(msg, proxy ? "proxy-authenticate" : "www-authenticate"));
    if (!ch) return false;
    const uri =
      tx.method === "INVITE" || tx.method === "REGISTER" || tx.method === "OPTIONS"
        ? this.requestUri
        : this.remoteTarget;
    const value = digestAuthorization(ch, {
      method: tx.method,
      uri,
      username: this.host.opts.auth_username || this.host.opts.service,
      password: this.host.opts.auth_password,
    });
    this.sendRequest(tx.method, [[proxy ? "Proxy-Authorization" : "Authorization", value]]);
    return true;
  }

  /** The peer hung up (BYE) or asks something in the dialog: answer 200 (§15.1.2). */
  private onRequest(msg: SipWireMessage, from: Peer, leg: Leg): void {
    if (msg.method === "ACK") return;
    const vias = (msg.headers.get("via") ?? []).map((v) => ["Via", v] as [string, string]);
    const resp = buildSip("SIP/2.0 200 OK", [
      ...vias,
      ["From", header(msg, "from")],
      ["To", header(msg, "to")],
      ["Call-ID", this.callId],
      ["CSeq", header(msg, "cseq")],
    ]);
    leg.send(resp, from.host, from.port);
    if (msg.method === "BYE" && this.state !== "done") {
      this.byeAt ||= performance.now();
      this.finish(true, "");
    }
  }

  abort(reason: string): void {
    this.finish(false, reason);
  }

  private finish(ok: boolean, reason: string, responseMs?: number): void {
    if (this.state === "done") return;
    this.state = "done";
    this.dispose();
    this.host.callEnded(this.callId, ok, reason, responseMs ?? this.responseMs);
  }

  mediaPair() {
    return this.remoteMedia
      ? {
          local: { ip: this.leg.ip, port: this.mediaPort },
          remote: this.remoteMedia,
          answerSdp: this.answerSdp,
          mediaMs: this.byeAt - this.ackAt,
        }
      : null;
  }

  dispose(): void {
    this.tx?.timer.stop();
    if (this.pauseTimer) clearTimeout(this.pauseTimer);
    if (this.recvTimer) clearTimeout(this.recvTimer);
  }
}
