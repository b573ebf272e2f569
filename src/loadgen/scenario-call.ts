/**
 * One call running a sipp XML scenario (docs/LOADGEN.md "Scenario files"). A received message is
 * matched against the current `recv`, skipping optional ones (sipp's rule); a message matching an
 * earlier step is a retransmission and gets the last message sent after that step again. A `send`
 * with `retrans` is retransmitted over UDP (doubling; capped at T2 unless an INVITE) until the next
 * message of the call arrives, for 64·T1 at most. Reaching the end (or `timewait`) is a success; an
 * unexpected message or a time-out is a failure. Actions and the `test`/`chance`/`condexec`/`rrs`
 * attributes of a step follow docs/LOADGEN.md "Scenario actions and variables".
 */
import { newBranch, RetransmitTimer, token, type CallHost, type Leg, type Peer, type SipCall } from "./call-host.ts";
import { digestAuthorization, parseDigestChallenge } from "./digest.ts";
import { runActions, stepRuns, takesNext, type ActionOutcome } from "./scenario-action-run.ts";
import type { StepExtras } from "./scenario-actions.ts";
import { renderLine, renderTemplate, type TemplateContext } from "./scenario-template.ts";
import { CallVars } from "./scenario-vars.ts";
import type { Scenario } from "./scenario-xml.ts";
import { cseqOf, header, parseSipWire, tagOf, uriOf, type SipWireMessage } from "./sip-wire.ts";

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
  private readonly vars = new CallVars();
  /** sipp's `rrs`: the dialog's route set (in the order `[routes]` uses it) and remote target, kept from the first recv that asks for them. */
  private dialog: { routes: string[]; target: string } | undefined;
  private readonly rtdStarts = new Map<string, number>();
  private readonly rtdDone = new Set<string>();
  private readonly born = performance.now();
  /** Set when a `jump` action moved pc during the current step. */
  private jumped = false;

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

  /** The step's `next` when its `test`/`chance` allow it, else the step after. */
  private jump(label: string | undefined, fallthrough: number, step?: StepExtras): number {
    if (label === undefined || (step && !takesNext(step, this.vars))) return fallthrough;
    return this.scenario.labels.get(label)!;
  }

  /**
   * Runs a step's actions; false when they ended the call. A `jump` action moves to sipp's message
   * index (labels are not messages), `stop_*` ends the call or asks the engine to stop.
   */
  private act(step: StepExtras | undefined, msg: SipWireMessage | undefined): boolean {
    if (step?.counter !== undefined) {
      const counters = this.host.stats.counters;
      counters[step.counter] = (counters[step.counter] ?? 0) + 1;
    }
    if (step?.rtd !== undefined) this.stopRtd(step.rtd, step.repeatRtd === true);
    if (step?.startRtd !== undefined) {
      this.rtdStarts.set(step.startRtd, performance.now());
      this.rtdDone.delete(step.startRtd);
    }
    if (!step?.actions) return true;
    const r: ActionOutcome = runActions(step.actions, {
      vars: this.vars,
      msg,
      render: (t) => renderLine(t, this.context()),
      log: (line) => this.host.scenarioLog?.(`${this.callId}: ${line}`),
    });
    if (!r.ok) {
      this.finish(false, r.reason);
      return false;
    }
    if (r.stop === "stop_call") {
      this.finish(false, "stop_call");
      return false;
    }
    if (r.stop) this.host.stopRun?.(r.stop === "stop_now");
    if (r.jump !== undefined) {
      const messages = this.scenario.commands.flatMap((c, i) => (c.kind === "label" ? [] : [i]));
      this.pc = messages[Math.floor(r.jump)] ?? this.scenario.commands.length;
      this.jumped = true;
    }
    return true;
  }

  /**
   * `rtd`: one response-time measurement since the timer's `start_rtd`, or since the call began
   * (sipp starts every timer with the call); once per call unless `repeat_rtd` or a new `start_rtd`.
   */
  private stopRtd(name: string, repeat: boolean): void {
    if (this.rtdDone.has(name) && !repeat) return;
    const t0 = this.rtdStarts.get(name) ?? this.born;
    this.rtdDone.add(name);
    const r = (this.host.stats.rtd[name] ??= { count: 0, avg_ms: 0 });
    r.count++;
    r.avg_ms += (performance.now() - t0 - r.avg_ms) / r.count;
  }

  /** Runs commands until one waits (recv, pause) or the scenario ends. */
  private run(): void {
    const cmds = this.scenario.commands;
    let steps = 0;
    while (!this.done) {
      const cmd = cmds[this.pc];
      if (!cmd || cmd.kind === "timewait") return this.finish(true, "");
      // A jump or next loop that never sends, receives or pauses would hold the event loop forever.
      if (++steps > 10_000) return this.finish(false, "loop without a wait");
      if (cmd.step && !stepRuns(cmd.step, this.vars)) {
        this.pc++;
        continue;
      }
      this.jumped = false;
      switch (cmd.kind) {
        case "send": {
          const text = this.send(cmd.template, cmd.retrans);
          if (!this.act(cmd.step, cmd.step?.actions ? (parseSipWire(text) ?? undefined) : undefined)) return;
          if (!this.jumped) this.pc = this.jump(cmd.next, this.pc + 1, cmd.step);
          break;
        }
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
          this.act(cmd.step, undefined);
          this.wait = setTimeout(() => {
            this.pc++;
            this.run();
          }, cmd.ms ?? this.host.opts.pause_ms);
          return;
        case "nop":
          if (!this.act(cmd.step, this.last)) return;
          if (!this.jumped) this.pc = this.jump(cmd.next, this.pc + 1, cmd.step);
          break;
        case "label":
          this.pc++;
          break;
      }
    }
  }

  /** What templates see now: keywords, the last message, the injection row, the variables. */
  private context(): TemplateContext {
    const { opts } = this.host;
    const remote = this.peer;
    const v6 = this.leg.ip.includes(":");
    const routes = this.dialog?.routes ?? [...(this.last?.headers.get("record-route") ?? [])].reverse();
    return {
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
      vars: this.vars,
    };
  }

  private send(template: string, retrans: number | undefined): string {
    const { opts, t1, t2, stats } = this.host;
    const firstLine = /^\s*(\S+)/.exec(template)?.[1] ?? "";
    const isRequest = firstLine !== "SIP/2.0";
    // sipp's [cseq]: a new request takes the next number; ACK and CANCEL reuse the current one.
    if (isRequest && firstLine !== "ACK" && firstLine !== "CANCEL") this.cseq++;
    const remote = this.peer;
    const text = renderTemplate(template, this.context());
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
      this.timer = new RetransmitTimer(
        resend,
        retrans,
        cap,
        64 * t1,
        () => this.finish(false, "timeout"),
        opts.no_retrans || this.leg.reliable,
      );
    }
    return text;
  }

  /** `[authentication]`: the whole header line answering the last 401/407 (RFC 3261 §22.2). */
  private authorization(method: string, uri: string, username?: string, password?: string): string {
    const last = this.last;
    if (!last || (last.status !== 401 && last.status !== 407)) return "";
    const proxy = last.status === 407;
    const ch = parseDigestChallenge(header(last, proxy ? "proxy-authenticate" : "www-authenticate"));
    if (!ch) return "";
    const { opts } = this.host;
    const value = digestAuthorization(ch, {
      method,
      uri,
      username: username ?? (opts.auth_username || opts.service),
      password: password ?? opts.auth_password,
    });
    return `${proxy ? "Proxy-Authorization" : "Authorization"}: ${value}`;
  }

  private matches(msg: SipWireMessage, cmd: Scenario["commands"][number]): boolean {
    if (cmd.kind !== "recv") return false;
    if (cmd.request !== undefined) return msg.method === cmd.request;
    // A response belongs to the request this call sent last (sipp checks the transaction too).
    return (
      !msg.method &&
      msg.status === cmd.response &&
      (!this.lastRequestMethod || cseqOf(msg).method === this.lastRequestMethod)
    );
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
      const step = cmds[j]!.step;
      if (step && !stepRuns(step, this.vars)) {
        j++;
        continue;
      }
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
    const cmd = cmds[found] as { next?: string; step?: StepExtras };
    if (cmd.step?.rrs && !this.dialog) {
      // RFC 3261 §12.1.1 / §12.1.2: a UAS keeps the request's Record-Route in order, a UAC the response's reversed.
      const rr = msg.headers.get("record-route") ?? [];
      this.dialog = { routes: msg.method ? [...rr] : [...rr].reverse(), target: uriOf(header(msg, "contact")) };
    }
    this.pc = found;
    this.jumped = false;
    if (!this.act(cmd.step, msg)) return;
    if (!this.jumped) this.pc = this.jump(cmd.next, found + 1, cmd.step);
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
