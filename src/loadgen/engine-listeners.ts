/**
 * The listeners of a server engine (docs/LOADGEN.md "Control API", transport toggles): each one can
 * be closed and opened again on the port it first bound, to simulate an outage of one transport in
 * failover tests. A closed UDP port answers nothing (the kernel sends ICMP port unreachable), a
 * closed TCP or TLS port refuses connections and its open connections are closed.
 */
import type { Leg } from "./call-host.ts";
import { AppError } from "../core/index.ts";
import {
  advertisedIp,
  listenStream,
  udpLeg,
  type TransportHooks,
  type TransportKind,
  type TransportMode,
} from "./transport.ts";

export interface ListenerSpec {
  mode: TransportMode;
  ip: string;
  port: number;
  tls_cert?: string | undefined;
  tls_key?: string | undefined;
}

export interface ListenerState {
  index: number;
  transport: TransportKind;
  ip: string;
  port: number;
  enabled: boolean;
}

interface Entry {
  spec: ListenerSpec;
  advertised: string;
  /** The port bound first (an ephemeral port stays the same across a toggle). */
  port: number;
  enabled: boolean;
  leg?: Leg | undefined;
  stop?: (() => void) | undefined;
}

export class ListenerSet {
  private readonly entries: Entry[] = [];

  /** `legs` is the engine's list of UDP sockets: an open UDP listener sits in it (the engine closes it on stop). */
  constructor(
    private readonly hooks: TransportHooks,
    private readonly legs: Leg[],
  ) {}

  async add(spec: ListenerSpec): Promise<ListenerState> {
    const e: Entry = { spec, advertised: advertisedIp(spec.ip), port: spec.port, enabled: false };
    await this.open(e);
    this.entries.push(e);
    return this.state(e, this.entries.length - 1);
  }

  states(): ListenerState[] {
    return this.entries.map((e, i) => this.state(e, i));
  }

  get size(): number {
    return this.entries.length;
  }

  /** Closes or reopens listener `index`; nothing happens when it is already in that state. */
  async setEnabled(index: number, enabled: boolean): Promise<void> {
    const e = this.entries[index];
    if (!e) throw new AppError("NOT_FOUND", `no listener ${index} (the primary engine has ${this.entries.length})`);
    if (e.enabled === enabled) return;
    if (!enabled) return this.close(e);
    try {
      await this.open(e);
    } catch (err) {
      throw new AppError("CONFLICT", `cannot reopen listener ${index}: ${(err as Error).message}`);
    }
  }

  /** Stream listeners (UDP legs close with the engine's legs). */
  closeAll(): void {
    for (const e of this.entries) if (e.enabled && e.stop) e.stop();
  }

  private state(e: Entry, index: number): ListenerState {
    return { index, transport: e.spec.mode.kind, ip: e.advertised, port: e.port, enabled: e.enabled };
  }

  private async open(e: Entry): Promise<void> {
    const { spec } = e;
    if (spec.mode.kind === "udp") {
      e.leg = await udpLeg(spec.ip, e.port, e.advertised, this.hooks);
      e.port = e.leg.port;
      this.legs.push(e.leg);
    } else {
      const l = listenStream(
        spec.ip,
        e.port,
        e.advertised,
        spec.mode.kind,
        spec.tls_cert && spec.tls_key ? { cert: spec.tls_cert, key: spec.tls_key } : undefined,
        this.hooks,
      );
      e.port = l.port;
      e.stop = l.stop;
    }
    e.enabled = true;
  }

  private close(e: Entry): void {
    if (e.leg) {
      e.leg.close();
      const i = this.legs.indexOf(e.leg);
      if (i >= 0) this.legs.splice(i, 1);
      e.leg = undefined;
    }
    e.stop?.();
    e.stop = undefined;
    e.enabled = false;
  }
}
