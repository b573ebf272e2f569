import type { HepPacket } from "../hep/index.ts";

/**
 * Capture agents seen by this node (the Agents tag): per capture id and sender address, the node
 * name, packet count and last packet time. Updated per packet (one map lookup), drained in
 * batches by main.ts into the settings database.
 */
export interface AgentActivity {
  nodeId: string;
  nodeName: string;
  ip: string;
  packets: number;
  lastSeenMs: number;
}

export class AgentTracker {
  private seen = new Map<string, AgentActivity>();

  /** The entry of the previous packet: an agent sends runs of packets, so most need no lookup. */
  private last: AgentActivity | undefined;
  private lastCaptureId = -1;

  observe(p: HepPacket, remoteIp: string | undefined, nowMs: number): void {
    const ip = remoteIp ?? "";
    let a = this.last;
    if (!(a && this.lastCaptureId === p.captureId && a.ip === ip)) {
      a = this.seen.get(`${p.captureId}|${ip}`);
      this.last = a;
      this.lastCaptureId = p.captureId;
    }
    if (a) {
      a.packets++;
      a.lastSeenMs = nowMs;
      if (p.nodeName && a.nodeName !== p.nodeName) a.nodeName = p.nodeName;
      return;
    }
    a = { nodeId: String(p.captureId), nodeName: p.nodeName ?? "", ip, packets: 1, lastSeenMs: nowMs };
    this.seen.set(`${p.captureId}|${ip}`, a);
    this.last = a;
  }

  /** Activity drained from another tracker (the ingest thread's). */
  merge(list: readonly AgentActivity[]): void {
    for (const x of list) {
      const key = `${x.nodeId}|${x.ip}`;
      const a = this.seen.get(key);
      if (!a) this.seen.set(key, { ...x });
      else {
        a.packets += x.packets;
        if (x.lastSeenMs >= a.lastSeenMs) {
          a.lastSeenMs = x.lastSeenMs;
          if (x.nodeName) a.nodeName = x.nodeName;
        }
      }
    }
  }

  /** Activity since the last drain. */
  drain(): AgentActivity[] {
    const out = [...this.seen.values()];
    this.seen = new Map();
    this.last = undefined;
    return out;
  }
}
