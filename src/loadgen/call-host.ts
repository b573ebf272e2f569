/**
 * What a call (UAC or UAS side) needs from its engine, plus the retransmission timer shared by
 * both sides (RFC 3261 §17.1.1.2 Timer A/B, §17.1.2.2 Timer E/F, §13.3.1.4 2xx retransmission).
 */
import { randomBytes } from "node:crypto";
import type { LoadgenOptions } from "./options.ts";
import type { SipWireMessage } from "./sip-wire.ts";
import type { LoadgenStats } from "./stats.ts";
import type { MediaSession } from "./media-report.ts";

/** One UDP socket of the engine and the address its headers advertise. */
export interface Leg {
  /** UDP sends to host:port; a stream leg writes to its connection and ignores them. */
  send(text: string, host: string, port: number): void;
  readonly ip: string;
  readonly port: number;
  /** Via transport token (RFC 3261 §18): UDP, TCP or TLS. */
  readonly transport: "UDP" | "TCP" | "TLS";
  /** Stream transports: no retransmissions (§17.1.1.2, Timer A only on unreliable transports). */
  readonly reliable: boolean;
  close(): void;
  /** A stream connection that has ended (either side closed it); never set for UDP. */
  readonly closed?: boolean;
}

export interface Peer {
  host: string;
  port: number;
}

export interface CallHost {
  readonly opts: LoadgenOptions;
  readonly stats: LoadgenStats;
  /** RFC 3261 §17.1.1.1: T1 round-trip estimate (500 ms), T2 cap for non-INVITE (4 s). */
  readonly t1: number;
  readonly t2: number;
  /** Ends the call: counts success or the failure reason, keeps it a while for late retransmissions. */
  callEnded(callId: string, ok: boolean, reason: string, responseMs?: number): void;
  /** A scenario's `<log>`/`<warning>` line for `-trace_logs` (docs/LOADGEN.md "Scenario actions and variables"). */
  scenarioLog?(line: string): void;
  /** A scenario's `<exec int_cmd="stop_now|stop_gracefully">`. */
  stopRun?(now: boolean): void;
}

export interface SipCall {
  readonly callId: string;
  onMessage(msg: SipWireMessage, from: Peer, leg: Leg): void;
  /** Stops its timers (engine shutdown or linger expiry). */
  dispose(): void;
  /** The socket or connection the call sends on (client calls). */
  readonly leg?: Leg;
  /** Its stream connection closed under it: the call ends at once as failed with `reason`. */
  abort?(reason: string): void;
  /** The audio addresses both sides offered (for RTCP and media reports), when the call negotiated them. */
  mediaPair?(): MediaSession | null;
}

/** Calls per media-port cycle of one side; 2 ports (RTP, RTCP) each. */
const MEDIA_PORTS_PER_SIDE = 12000;

/**
 * The audio port a built-in `uac`/`uas` call offers or answers (docs/LOADGEN.md "Engine"): its own
 * even port per call number `n` (1, 2, …), so svc's QoS view, which also matches reports by media
 * address, keeps the calls between two hosts apart. uac 6000 + 2·((n − 1) mod 12000), 6000-29998;
 * uas 30000 + 2·((n − 1) mod 12000), 30000-53998: a loadgen client and server on one address never
 * offer the same port.
 */
export function mediaPort(side: "uac" | "uas", n: number): number {
  return (side === "uac" ? 6000 : 30000) + 2 * ((Math.max(n, 1) - 1) % MEDIA_PORTS_PER_SIDE);
}

let counter = 0;
const tokenPrefix = randomBytes(3).toString("hex");
/** Unique per process: tags and Call-IDs need global uniqueness (§8.1.1.4, §19.3). */
export const token = () => `${tokenPrefix}${(++counter).toString(36)}`;
/** §8.1.1.7: branches start with the magic cookie. */
export const newBranch = () => `z9hG4bK-lg-${token()}`;

/**
 * Retransmits `send` at `first` ms, doubling each time up to `cap` (Infinity for INVITE Timer A),
 * and calls `onTimeout` after `total` ms (Timer B/F/H: 64·T1). `noRetrans` keeps only the timeout.
 */
export class RetransmitTimer {
  private retrans: ReturnType<typeof setTimeout> | undefined;
  private timeout: ReturnType<typeof setTimeout> | undefined;
  private interval: number;

  constructor(
    private readonly resend: () => void,
    first: number,
    private cap: number,
    total: number,
    onTimeout: () => void,
    noRetrans: boolean,
  ) {
    this.interval = first;
    if (!noRetrans) this.schedule();
    this.timeout = setTimeout(() => {
      this.stop();
      onTimeout();
    }, total);
  }

  private schedule(): void {
    this.retrans = setTimeout(() => {
      this.resend();
      this.interval = Math.min(this.interval * 2, this.cap);
      this.schedule();
    }, this.interval);
  }

  /** Non-INVITE Proceeding (§17.1.2.2): keep retransmitting, every T2. */
  slowTo(interval: number): void {
    if (!this.retrans) return;
    clearTimeout(this.retrans);
    this.interval = interval;
    this.cap = interval;
    this.schedule();
  }

  /** INVITE Proceeding (§17.1.1.2): no more retransmissions and Timer B no longer applies. */
  stop(): void {
    if (this.retrans) clearTimeout(this.retrans);
    if (this.timeout) clearTimeout(this.timeout);
    this.retrans = undefined;
    this.timeout = undefined;
  }
}
