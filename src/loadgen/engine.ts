/**
 * One load-generator engine (docs/LOADGEN.md "Engine"): its sockets (transport.ts), its calls by Call-ID, the
 * call-rate scheduler (`-r`/`-rp`, `-l`, `-m`, `-users`), statistics and the message mirror.
 * A client engine (`uac`, `register`, `options`) starts calls towards `remote_addr`; a server engine
 * (`uas`, management mode) answers on one or more listeners.
 */
import { mediaPort, type Leg, type Peer, type SipCall, type CallHost } from "./call-host.ts";
import { copyMessage, createMirror, type Mirror } from "./mirror.ts";
import { LoadgenUsageError, splitHostPort, type LoadgenOptions } from "./options.ts";
import { buildResponse, header, parseSipWire } from "./sip-wire.ts";
import { copyStats, emptyStats, type LoadgenStats } from "./stats.ts";
import { ClientCall, type ClientScenario } from "./uac.ts";
import { outOfDialogAnswer, ServerCall } from "./uas.ts";
import { loadInjection, type Injection } from "./injection.ts";
import { ScenarioCall } from "./scenario-call.ts";
import type { Scenario } from "./scenario-xml.ts";
import { EngineLog } from "./otel-log.ts";
import { bindSpecsOf, checkEngineOptions, engineScenario, type BindCheck } from "./engine-checks.ts";
import { PerIpSockets } from "./transport-ui.ts";
import {
  advertisedIp,
  connectStream,
  resolveHost,
  STREAM_CLOSE_DELAY_MS,
  transportMode,
  udpLeg,
  type TransportHooks,
  type TransportMode,
} from "./transport.ts";
import { ListenerSet } from "./engine-listeners.ts";
import { checkScenarioSwitch } from "./engine-scenario.ts";
import { Reconnect } from "./reconnect.ts";
import { CallLeftovers } from "./engine-leftovers.ts";

export interface EngineInit {
  opts: LoadgenOptions;
  mode: "load" | "management";
  /** Engine id in multi-engine runs (composite profiles). */
  id?: string;
}

export class Engine implements CallHost {
  readonly opts: LoadgenOptions;
  readonly stats: LoadgenStats;
  readonly t1 = 500;
  readonly t2 = 4000;
  readonly id: string;
  /** The built-in scenario of calls started from now on (switchScenario), or the `-sf` file's name. */
  scenario: string;
  /** A client scenario (uac, register, options, an -sf file starting with a send); `loadgen profile check` reads it too. */
  readonly client: boolean;
  /** The `-sf` scenario, when one is loaded instead of a built-in one. */
  private readonly xml: Scenario | undefined;
  private readonly injection: Injection | undefined;
  /** Bound UDP sockets and shared client connections. */
  readonly legs: Leg[] = [];
  /** What the engine listens on or sends from (transport, advertised IP, port), for logs and tests. */
  readonly binds: Array<{ transport: string; ip: string; port: number }> = [];
  /** A server engine's listeners, each one can be closed and reopened (docs/LOADGEN.md "Control API"). */
  readonly listeners: ListenerSet;
  /** `t1`/`l1`: a new shared connection when the peer closed the old one (reconnect.ts). */
  private readonly reconnect = new Reconnect(() => this.newClientLeg());
  private readonly clientMode: TransportMode;
  /** `-t ui`: the sockets per IP address of the injection file. */
  private readonly perIp: PerIpSockets | undefined;
  private readonly hooks: TransportHooks;
  private readonly calls = new Map<string, SipCall>();
  /** Ended calls (kept 64·T1) and the per-call sockets (`un`, `tn`, `ln`) by Call-ID. */
  private readonly leftovers = new CallLeftovers(64 * this.t1);
  private mirror: Mirror | undefined;
  private otel: EngineLog | undefined;
  private remote: Peer | undefined;
  /** The TLS server name (SNI): the remote host as given when it is a name, else "" (docs/LOADGEN.md "Engine"). */
  private remoteName = "";
  private started = 0;
  private rateStart = 0;
  private rateBase = 0;
  private responseSum = 0;
  private responseCount = 0;
  private tick: ReturnType<typeof setInterval> | undefined;
  private globalTimeout: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  /** `<exec int_cmd="stop_gracefully">`: no new calls; the engine stops when the last one ends. */
  private draining = false;
  private stoppedAt = 0;
  private resolveDone!: () => void;
  /** Resolves when the engine has finished (`-m` reached, `-timeout`, or stop()). */
  readonly done = new Promise<void>((r) => (this.resolveDone = r));

  constructor(init: EngineInit) {
    this.opts = init.opts;
    this.id = init.id ?? "main";
    const o = init.opts;
    ({ xml: this.xml, scenario: this.scenario, client: this.client } = engineScenario(o, init.mode));
    this.injection = o.injection_file ? loadInjection(o.injection_file) : undefined;
    this.clientMode = transportMode(o.transport);
    const binds = this.bindSpecs();
    checkEngineOptions(o, this.scenario, this.client, binds);
    if (this.clientMode.perIp && this.client)
      this.perIp = new PerIpSockets(this.injection!, o.ip_field, o.injection_file);
    this.hooks = {
      onMessage: (text, from, leg) => this.onDatagram(text, from, leg),
      onSent: (leg, text, host, port) => {
        this.stats.messages_sent++;
        copyMessage(this.mirror, "sent", leg.transport, leg.ip, leg.port, host, port, text);
      },
      onStreamError: () => this.stats.transport_errors++,
      onStreamClosed: (leg) => this.onStreamClosed(leg),
    };
    this.listeners = new ListenerSet(this.hooks, this.legs);
    this.stats = emptyStats(this.scenario, init.mode, o.rate, o.rate_period_ms);
  }

  /** Listeners (management/UAS) or the client's own bind, each with its transport mode (also listed by `loadgen profile check`). */
  bindSpecs(): BindCheck[] {
    return bindSpecsOf(this.opts, this.client);
  }

  /** Binds the sockets and starts the scheduler. */
  async start(): Promise<void> {
    const o = this.opts;
    this.otel = EngineLog.open(o, this.id, () => this.scenario, this.stats.mode);
    this.mirror = await createMirror({
      ...o,
      message_file: o.message_file || `${this.scenario}_${process.pid}_messages.log`, // sipp's default names, in the working directory
      log_file: o.log_file || `${this.scenario}_${process.pid}_logs.log`,
    });
    try {
      if (this.client) {
        const r = splitHostPort(this.opts.remote_addr, 5060, "-rsa");
        const literal = /^[\d.]+$|:/.test(r.host);
        const host = literal ? r.host : await resolveHost(r.host);
        this.remote = { host, port: r.port };
        this.remoteName = literal ? "" : r.host;
        if (this.perIp) for (const leg of await this.perIp.bind(o.local_port ?? 0, this.hooks, host)) this.addLeg(leg);
        else if (!this.clientMode.perCall) this.addLeg(await this.newClientLeg());
      } else
        for (const b of this.bindSpecs()) {
          const l = await this.listeners.add(b);
          this.binds.push({ transport: l.transport, ip: l.ip, port: l.port });
        }
    } catch (e) {
      await this.stop();
      throw e;
    }
    this.started = performance.now();
    this.rateStart = this.started;
    this.leftovers.start();
    if (o.timeout_s > 0) this.globalTimeout = setTimeout(() => void this.stop(), o.timeout_s * 1000);
    if (this.client) {
      if (o.users > 0) for (let i = 0; i < o.users && this.mayStart(); i++) this.startCall();
      else this.tick = setInterval(() => this.schedule(), 5);
    }
  }

  private addLeg(leg: Leg): void {
    this.legs.push(leg);
    this.binds.push({ transport: leg.transport.toLowerCase(), ip: leg.ip, port: leg.port });
  }

  /** The client's socket: UDP bound at -i/-p, or a TCP/TLS connection to the remote address. */
  private async newClientLeg(): Promise<Leg> {
    const o = this.opts;
    const advertised = advertisedIp(o.local_ip);
    const { kind, perCall } = this.clientMode;
    if (kind === "udp") return await udpLeg(o.local_ip, perCall ? 0 : (o.local_port ?? 0), advertised, this.hooks);
    try {
      return await connectStream(this.remote!, advertised, kind, this.hooks, this.remoteName);
    } catch (e) {
      if (perCall) throw e;
      throw new LoadgenUsageError(`cannot connect ${kind} to ${this.opts.remote_addr}: ${(e as Error).message}`);
    }
  }

  private onDatagram(text: string, from: Peer, leg: Leg): void {
    if (this.stopped) return;
    const msg = parseSipWire(text);
    if (!msg) return;
    this.stats.messages_received++;
    copyMessage(this.mirror, "received", leg.transport, from.host, from.port, leg.ip, leg.port, text);
    const callId = header(msg, "call-id");
    const call = this.calls.get(callId) ?? this.leftovers.call(callId);
    if (call) return call.onMessage(msg, from, leg);
    if (!msg.method) {
      this.stats.unexpected_messages++;
      return;
    }
    if (msg.method === "ACK") return;
    if (this.xml && !this.client) {
      const first = this.xml.commands.find((c) => c.kind === "recv");
      if (first?.kind === "recv" && first.request === msg.method) {
        if (this.opts.total_calls > 0 && this.stats.calls_created >= this.opts.total_calls) return;
        const n = this.stats.calls_created + 1;
        const sc = this.admit(
          callId,
          new ScenarioCall(this, this.xml, leg, from, n, this.injection?.rowFor(n) ?? [], callId),
        );
        sc.start();
        return sc.onMessage(msg, from, leg);
      }
    }
    if (msg.method === "INVITE" && !this.client && !this.xml) {
      if (this.opts.total_calls > 0 && this.stats.calls_created >= this.opts.total_calls)
        return leg.send(buildResponse(msg, 503, "Service Unavailable", ""), from.host, from.port);
      return this.admit(callId, new ServerCall(this, msg, mediaPort("uas", this.stats.calls_created + 1))).onMessage(
        msg,
        from,
        leg,
      );
    }
    const { status, reason } = outOfDialogAnswer(msg.method);
    if (status === 200) this.stats.requests_answered++;
    else this.stats.unexpected_messages++;
    leg.send(buildResponse(msg, status, reason, `lg${Date.now().toString(36)}`), from.host, from.port);
  }

  /** A call a server engine takes on (a new Call-ID whose first request starts its scenario). */
  private admit<C extends SipCall>(callId: string, call: C): C {
    this.calls.set(callId, call);
    this.stats.calls_created++;
    this.stats.calls_peak = Math.max(this.stats.calls_peak, ++this.stats.calls_current);
    return call;
  }

  private mayStart(): boolean {
    const o = this.opts;
    if (this.stopped || this.draining || this.stats.paused) return false;
    if (o.total_calls > 0 && this.stats.calls_created >= o.total_calls) return false;
    return !(o.max_concurrent > 0 && this.stats.calls_current >= o.max_concurrent);
  }

  /** `-r` calls every `-rp`: the number due since the last rate change, capped by `-l` and `-m`. */
  private schedule(): void {
    const due =
      this.rateBase + Math.floor((this.stats.rate * (performance.now() - this.rateStart)) / this.opts.rate_period_ms);
    while (this.stats.calls_created < due && this.mayStart()) this.startCall();
    // Calls held back by -l are not made up for later in a burst (sipp keeps the rate, not the count).
    if (this.stats.calls_created < due && !this.stats.paused && this.opts.max_concurrent > 0) this.rebase();
  }

  private rebase(): void {
    this.rateStart = performance.now();
    this.rateBase = this.stats.calls_created;
  }

  private startCall(): void {
    this.stats.calls_created++;
    this.stats.calls_peak = Math.max(this.stats.calls_peak, ++this.stats.calls_current);
    if (this.perIp) {
      const { leg, row } = this.perIp.pick(this.stats.calls_created);
      return this.launch(leg, false, row);
    }
    if (!this.clientMode.perCall) {
      if (!this.legs[0]!.closed) return this.launch(this.legs[0]!, false);
      return void this.reconnect.leg().then(
        (leg) => (this.stopped ? leg.close() : this.launch((this.legs[0] = leg), false)),
        (e: Error) => this.countEnd(false, `connect: ${e.message}`),
      );
    }
    this.newClientLeg().then(
      (leg) => {
        if (this.stopped) return leg.close();
        this.launch(leg, true);
      },
      (e: Error) => this.countEnd(false, `connect: ${e.message}`),
    );
  }

  /** A client's connection closed under its calls: they fail at once (a server's dialogs go on over a new connection). */
  private onStreamClosed(leg: Leg): void {
    if (this.client && !this.stopped)
      for (const c of [...this.calls.values()]) if (c.leg === leg) c.abort?.("connection closed");
  }

  private launch(leg: Leg, own: boolean, row?: readonly string[]): void {
    const n = this.stats.calls_created;
    const call = this.xml
      ? new ScenarioCall(this, this.xml, leg, this.remote!, n, row ?? this.injection?.rowFor(n) ?? [])
      : new ClientCall(this, this.scenario as ClientScenario, leg, this.remote!, mediaPort("uac", n));
    this.calls.set(call.callId, call);
    if (own) this.leftovers.adopt(call.callId, leg);
    call.start();
  }

  callEnded(callId: string, ok: boolean, reason: string, responseMs?: number): void {
    const call = this.calls.get(callId);
    if (!call) return;
    this.calls.delete(callId);
    this.leftovers.ended(callId, call);
    if (ok) {
      const media = call.mediaPair?.();
      if (media) {
        this.mirror?.rtcp(callId, media.local, media.remote);
        this.mirror?.mediaReport(callId, media);
      }
    }
    if (responseMs !== undefined) {
      this.responseSum += responseMs;
      this.responseCount++;
    }
    this.countEnd(ok, reason, callId);
  }

  private countEnd(ok: boolean, reason: string, callId = ""): void {
    const s = this.stats;
    this.otel?.callEnded(callId, ok, reason);
    s.calls_current--;
    if (ok) s.calls_successful++;
    else {
      s.calls_failed++;
      s.failed_reasons[reason] = (s.failed_reasons[reason] ?? 0) + 1;
    }
    if (this.client && this.opts.users > 0 && this.mayStart()) this.startCall();
    this.checkDone();
  }

  scenarioLog(line: string): void {
    this.mirror?.note(line);
  }

  stopRun(now: boolean): void {
    this.draining = true;
    if (now) setTimeout(() => void this.stop(), 0);
    else this.checkDone();
  }

  private checkDone(): void {
    const o = this.opts;
    if (this.draining && this.stats.calls_current === 0) setTimeout(() => void this.stop(), 0);
    if (o.total_calls <= 0) return;
    const s = this.stats;
    const finished = this.client
      ? s.calls_created >= o.total_calls && s.calls_current === 0
      : s.calls_successful + s.calls_failed >= o.total_calls;
    if (!finished) return;
    this.stoppedAt = performance.now();
    // Stop after this turn (the last 200 to BYE went out synchronously); a client's TCP/TLS streams first linger 4 s, as in callEnded.
    const streams = this.client && [...this.legs, ...this.leftovers.legs()].some((l) => l.reliable);
    setTimeout(() => void this.stop(), streams ? STREAM_CLOSE_DELAY_MS : 0);
  }

  setRate(rate: number): void {
    this.stats.rate = rate;
    this.rebase();
  }

  /** Switches the built-in scenario of calls started from now on (engine-scenario.ts says when it cannot). */
  switchScenario(name: string): void {
    checkScenarioSwitch({ file: this.xml !== undefined, client: this.client, current: this.scenario }, name);
    this.scenario = name;
    this.stats.scenario = name;
  }

  setPaused(paused: boolean): void {
    this.stats.paused = paused;
    if (!paused) {
      this.rebase();
      if (this.client && this.opts.users > 0)
        while (this.stats.calls_current < this.opts.users && this.mayStart()) this.startCall();
    }
  }

  snapshot(): LoadgenStats {
    const s = this.stats;
    s.elapsed_ms = Math.round((this.stopped ? this.stoppedAt : performance.now()) - this.started);
    s.response_time_ms_avg = this.responseCount ? Math.round((this.responseSum / this.responseCount) * 10) / 10 : 0;
    s.hep_sent = this.mirror?.hepSent ?? 0;
    s.log_export_errors = this.otel?.errors ?? 0;
    return copyStats(s);
  }

  /** Stops new calls, closes the sockets; calls still running stay counted in calls_current. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stoppedAt ||= performance.now();
    this.stopped = true;
    if (this.tick) clearInterval(this.tick);
    if (this.globalTimeout) clearTimeout(this.globalTimeout);
    for (const c of this.calls.values()) c.dispose();
    this.leftovers.close();
    for (const leg of this.legs) leg.close();
    this.listeners.closeAll();
    this.mirror?.close();
    if (this.otel) {
      await this.otel.stopped(this.snapshot());
      this.stats.log_export_errors = this.otel.errors;
    }
    this.resolveDone();
  }
}
