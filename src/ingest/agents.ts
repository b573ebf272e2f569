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

  observe(p: HepPacket, remoteIp: string | undefined, nowMs: number): void {
    const ip = remoteIp ?? "";
    const key = `${p.captureId}|${ip}`;
    const a = this.seen.get(key);
    if (a) {
      a.packets++;
      a.lastSeenMs = nowMs;
      if (p.nodeName && a.nodeName !== p.nodeName) a.nodeName = p.nodeName;
      return;
    }
    this.seen.set(key, { nodeId: String(p.captureId), nodeName: p.nodeName ?? "", ip, packets: 1, lastSeenMs: nowMs });
  }

  /** Activity since the last drain. */
  drain(): AgentActivity[] {
    const out = [...this.seen.values()];
    this.seen = new Map();
    return out;
  }
}
