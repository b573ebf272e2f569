/**
 * The connection table of one HEP stream listener (docs/ARCHITECTURE.md "HEP stream connections"):
 * who gets a slot at accept, and which connection gives its slot up for a known agent. Pure
 * bookkeeping over opaque connection handles; the listener (tcp.ts) closes and counts. This table
 * serves one thread; shared-slots.ts keeps the same rules over several.
 */

export interface SlotLimits {
  /** Slots in all (`ingest.hep.tcp.max_connections`). */
  maxConnections: number;
  /** Slots one source address may hold (`ingest.hep.tcp.max_connections_per_ip`). */
  maxConnectionsPerIp: number;
  /** Slots only known addresses may take (`ingest.hep.tcp.reserved_for_known_percent` of maxConnections). */
  reservedForKnown: number;
}

/** Why a connection was refused at accept (label `reason` of svc_hep_connections_closed_total). */
export type RefusalReason = "per_ip_limit" | "max_connections" | "reserved_for_known";

/** The answer at accept: take a slot (after closing `evict`, when set) or be refused. */
export type Admission<T> = { ok: true; evict?: T } | { ok: false; reason: RefusalReason };

/** Slots held by `maxConnections · percent / 100`, rounded down: the share unknown addresses cannot take. */
export const reservedSlots = (maxConnections: number, percent: number): number =>
  Math.floor((maxConnections * percent) / 100);

/** What the listener (tcp.ts) needs of a slot table: this file's, or shared-slots.ts's over several threads. */
export interface SlotTable<T> {
  readonly limits: SlotLimits;
  /** Connections this listener holds. */
  readonly size: number;
  /** Connections held in all (over every thread sharing the limits). */
  readonly total: number;
  connections(): IterableIterator<T>;
  admit(ip: string, known: boolean): Admission<T>;
  add(conn: T, ip: string): void;
  prove(conn: T): void;
  release(conn: T, ip: string): boolean;
  clear(): void;
}

export class ConnectionSlots<T> implements SlotTable<T> {
  /** Every connection holding a slot. */
  private readonly held = new Set<T>();
  /** Connections that have not completed a valid frame yet, oldest accept first (Set order). */
  private readonly unproven = new Set<T>();
  private readonly perIp = new Map<string, number>();

  constructor(readonly limits: SlotLimits) {}

  get size(): number {
    return this.held.size;
  }

  get total(): number {
    return this.held.size;
  }

  /** The connections holding a slot (for the idle sweep; deleting while iterating is safe). */
  connections(): IterableIterator<T> {
    return this.held.values();
  }

  /**
   * Whether a new connection from `ip` gets a slot. Every address is held to the per-address cap.
   * An unknown address gets one of the slots outside the reserved share; a known address gets any
   * free slot, and when none is free, the slot of the oldest connection that never sent a valid
   * frame (`evict`): a socket that has carried no HEP is worth less than an agent that has.
   */
  admit(ip: string, known: boolean): Admission<T> {
    if ((this.perIp.get(ip) ?? 0) >= this.limits.maxConnectionsPerIp) return { ok: false, reason: "per_ip_limit" };
    const open = this.held.size;
    if (!known) {
      if (open < this.limits.maxConnections - this.limits.reservedForKnown) return { ok: true };
      return { ok: false, reason: open >= this.limits.maxConnections ? "max_connections" : "reserved_for_known" };
    }
    if (open < this.limits.maxConnections) return { ok: true };
    const oldest = this.unproven.values().next();
    return oldest.done ? { ok: false, reason: "max_connections" } : { ok: true, evict: oldest.value };
  }

  /** `conn` from `ip` takes a slot (after `admit` said ok and its `evict` was released). */
  add(conn: T, ip: string): void {
    this.held.add(conn);
    this.unproven.add(conn);
    this.perIp.set(ip, (this.perIp.get(ip) ?? 0) + 1);
  }

  /** `conn` completed its first valid frame: it is no longer a candidate for eviction. */
  prove(conn: T): void {
    this.unproven.delete(conn);
  }

  /** Frees the slot of `conn` from `ip`; false when it held none (already released, or refused). */
  release(conn: T, ip: string): boolean {
    if (!this.held.delete(conn)) return false;
    this.unproven.delete(conn);
    const n = (this.perIp.get(ip) ?? 1) - 1;
    if (n > 0) this.perIp.set(ip, n);
    else this.perIp.delete(ip);
    return true;
  }

  clear(): void {
    this.held.clear();
    this.unproven.clear();
    this.perIp.clear();
  }
}
