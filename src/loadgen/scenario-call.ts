/**
 * One call running a sipp XML scenario (docs/LOADGEN.md "Scenario files"). A received message is
 * matched against the current `recv`, skipping optional ones (sipp's rule); a message matching an
 * earlier step is a retransmission and gets the last message sent after that step again. A `send`
 * with `retrans` is retransmitted over UDP (doubling; capped at T2 unless an INVITE) until the next
 * message of the call arrives, for 64·T1 at most. Reaching the end (or `timewait`) is a success; an
 * unexpected message or a time-out is a failure.
 */
import { newBranch, RetransmitTimer, token, type CallHost, type Leg, type Peer, type SipCall } from "./call-host.ts";
import { digestAuthorization, parseDigestChallenge } from "./digest.ts";
import { renderTemplate } from "./scenario-template.ts";
import type { Scenario } from "./scenario-xml.ts";
import { cseqOf, header, tagOf, uriOf, type SipWireMessage } from "./sip-wire.ts";

const keyOf = (m: SipWireMessage) => `${m.method || m.status} ${header(m, "cseq")}`;

export class ScenarioCall implements SipCall {
  readonly callId: string;
  private pc = 0;
  private cseq = 0;
  private last: SipWireMessage | undefined;
  private peerTag = "";
  private lastRequestMethod = "";
  private timer: RetransmitTimer | undefined;
  private wait: ReturnType<typeof setTimeout> | undefined;
  private done = false;
  /** Received message key → the last text sent after it (answers to its retransmissions). */
  private readonly answered = new Map<string, string>();
  private lastKey = "";
  private peer: Peer;
  /** sipp's `rrs`: the dialog's route set and remote target, kept from the first recv that asks for them. */
  private dialog: { routes: string[]; target: string } | undefined;

  constructor(
    private readonly host: CallHost,
    private readonly scenario: Scenario,
    readonly leg: Leg,
    peer: Peer,
    private readonly callNumber: number,
    private readonly fields: readonly string[],
    callId?: string,
  ) {
    this.peer = peer;
    this.callId = callId ?? `${callNumber}-${process.pid}-${token()}@${leg.ip}`;
  }

  start(): void {
    this.run();
  }

  private jump(label: string | undefined, fallthrough: number): number {
    return label === undefined ? fallthrough : this.scenario.labels.get(label)!;
  }

  /** Runs commands until one waits (recv, pause) or the scenario ends. */
  private run(): void {
    const cmds = this.scenario.commands;
    while (!this.done) {
      const cmd = cmds[this.pc];
      if (!cmd || cmd.kind === "timewait") return this.finish(true, "");
      switch (cmd.kind) {
        case "send":
          this.send(cmd.template, cmd.retrans);
          this.pc = this.jump(cmd.next, this.pc + 1);
          break;
        case "recv":
          if (cmd.timeout !== undefined || this.host.opts.recv_timeout_ms > 0) {
            const ms = cmd.timeout ?? this.host.opts.recv_timeout_ms;
            const at = this.pc;
            this.wait = setTimeout(() => {
              if (this.pc !== at || this.done) return;
              if (cmd.ontimeout === undefined) return this.finish(false, "recv_timeout");
              this.pc = this.jump(cmd.ontimeout, at + 1);
              this.run();
            }, ms);
          }
          return;
        case "pause":
          this.wait = setTimeout(() => {
            this.pc++;
            this.run();
          }, cmd.ms ?? this.host.opts.pause_ms);
          return;
        case "nop":
          this.pc = this.jump(cmd.next, this.pc + 1);
          break;
        case "label":
          this.pc++;
          break;
      }
    }
  }

  private send(template: string, retrans: number | undefined): void {
    const { opts, t1, t2, stats } = this.host;
    const firstLine = /^\s*(\S+)/.exec(template)?.[1] ?? "";
    const isRequest = firstLine !== "SIP/2.0";
    // sipp's [cseq]: a new request takes the next number; ACK and CANCEL reuse the current one.
    if (isRequest && firstLine !== "ACK" && firstLine !== "CANCEL") this.cseq++;
    const remote = this.peer;
    const v6 = this.leg.ip.includes(":");
    const routes = this.dialog?.routes ?? [...(this.last?.headers.get("record-route") ?? [])].reverse();
    const text = renderTemplate(template, {
      values: {
        service: opts.service,
        remote_ip: remote.host,
        remote_port: String(remote.port),
        local_ip: this.leg.ip,
        local_port: String(this.leg.port),
        server_ip: this.leg.ip,
        transport: this.leg.transport,
        call_number: String(this.callNumber),
        call_id: this.callId,
        cseq: String(Math.max(this.cseq, 1)),
        branch: newBranch(),
        pid: String(process.pid),
        media_ip: this.leg.ip,
        media_port: "6000",
        media_ip_type: v6 ? "6" : "4",
        local_ip_type: v6 ? "6" : "4",
        peer_tag_param: this.peerTag ? `;tag=${this.peerTag}` : "",
        next_url: this.dialog?.target ?? (this.last ? uriOf(header(this.last, "contact")) : ""),
        routes: routes.length > 0 ? `Route: ${routes.join(", ")}` : "",
      },
      last: this.last,
      fields: this.fields,
      authentication: (method, uri, username, password) => this.authorization(method, uri, username, password),
    });
    if (isRequest) this.lastRequestMethod = firstLine;
    this.timer?.stop();
    this.timer = undefined;
    this.leg.send(text, remote.host, remote.port);
    if (this.lastKey) this.answered.set(this.lastKey, text);
    if (retrans !== undefined) {
      const resend = () => {
        stats.retransmissions++;
        this.leg.send(text, remote.host, remote.port);
      };
      const cap = firstLine === "INVITE" ? Number.POSITIVE_INFINITY : t2;
      this.timer = new RetransmitTimer(resend, retrans, cap, 64 * t1, () => this.finish(false, "timeout"), opts.no_retrans || this.leg.reliable);
    }
  }

  /** `[authentication]`: the whole header line answering the last 401/407 (RFC 3261 §22.2). */
  private authorization(method: string, uri: string, username?: string, password?: string): string {
    const last = this.last;
    if (!last || (last.status !== 401 && last.status !== 407)) return "";
    const proxy = last.status === 407;
    const ch = parseDigestChallenge(header(last, proxy ? "proxy-authenticate" : "www-authenticate"));
    if (!ch) return "";
    const { opts } = this.host;
    const value = digestAuthorization(ch, { method, uri, username: username ?? (opts.auth_username || opts.service), password: password ?? opts.auth_password });
    return `${proxy ? "Proxy-Authorization" : "Authorization"}: ${value}`;
  }

  private matches(msg: SipWireMessage, cmd: Scenario["commands"][number]): boolean {
    if (cmd.kind !== "recv") return false;
    if (cmd.request !== undefined) return msg.method === cmd.request;
    // A response belongs to the request this call sent last (sipp checks the transaction too).
    return !msg.method && msg.status === cmd.response && (!this.lastRequestMethod || cseqOf(msg).method === this.lastRequestMethod);
  }

  onMessage(msg: SipWireMessage, from: Peer, _leg: Leg): void {
    const key = keyOf(msg);
    const again = this.answered.get(key);
    if (again !== undefined && key !== this.lastKey) {
      this.host.stats.retransmissions++;
      this.leg.send(again, this.peer.host, this.peer.port);
      return;
    }
    if (this.done) return;
    const cmds = this.scenario.commands;
    let j = this.pc;
    let found = -1;
    while (cmds[j]?.kind === "recv") {
      if (this.matches(msg, cmds[j]!)) {
        found = j;
        break;
      }
      if (!(cmds[j] as { optional: boolean }).optional) break;
      j++;
    }
    if (found < 0) {
      if (key === this.lastKey) {
        // The same message again while waiting for the next step: answer with what followed it.
        if (again !== undefined) this.leg.send(again, this.peer.host, this.peer.port);
        return;
      }
      if (msg.method === "" && msg.status < 200) return; // stray provisional answers are harmless
      this.host.stats.unexpected_messages++;
      return this.finish(false, `unexpected ${msg.method || msg.status}`);
    }
    if (this.wait) clearTimeout(this.wait);
    this.timer?.stop();
    this.timer = undefined;
    this.last = msg;
    this.lastKey = key;
    if (msg.method) this.peer = from;
    const to = tagOf(header(msg, "to"));
    if (!msg.method && to) this.peerTag = to;
    const cmd = cmds[found] as { next?: string; rrs?: boolean };
    if (cmd.rrs && !this.dialog) {
      // RFC 3261 §12.1.1 / §12.1.2: a UAS keeps the request's Record-Route in order, a UAC the response's reversed.
      const rr = msg.headers.get("record-route") ?? [];
      this.dialog = { routes: msg.method ? [...rr] : [...rr].reverse(), target: uriOf(header(msg, "contact")) };
    }
    this.pc = this.jump(cmd.next, found + 1);
    this.run();
  }

  abort(reason: string): void {
    this.finish(false, reason);
  }

  private finish(ok: boolean, reason: string): void {
    if (this.done) return;
    this.done = true;
    this.dispose();
    this.host.callEnded(this.callId, ok, reason);
  }

  dispose(): void {
    this.timer?.stop();
    if (this.wait) clearTimeout(this.wait);
  }
}
