/**
 * The call view (POST /api/v4/transactions/messages) of the calls an agent sent, and the order it
 * must show them in: per Call-ID, by capture time (the agent's HEP time), then, for messages with
 * the same capture time, in the order the agent sent their HEP datagrams (docs/ARCHITECTURE.md
 * "Several ingest threads": the row's UUIDv7 carries when it was received). The send order is the
 * frame order of the datagrams tshark saw on lo, so the expectation does not come from the appliance.
 */
import type { HepDatagram } from "./hep-wire.ts";
import { expectedTable } from "./stored-sip.ts";
import type { WireSip } from "./tshark-sip.ts";

/** The fields of a call-view item the tests name a message by. */
export interface ViewItem {
  event: string;
  cseq_method: string;
  src_ip: string;
  src_port: number;
  dst_ip: string;
  dst_port: number;
  /** Capture time, epoch µs. */
  timestamp_us: number;
  data_extra?: { cseq?: unknown };
}

/** A bearer token for `admin` (the appliance's config must carry that password's digest). */
export async function adminToken(api: string, password: string): Promise<string> {
  const login = await fetch(`${api}/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password }),
  });
  if (!login.ok) throw new Error(`login answered ${login.status}: ${await login.text()}`);
  return ((await login.json()) as { token: string }).token;
}

/**
 * The call view of every call of `wire` (Call-IDs with a message for hep_proto_1_call: the view's
 * default tables), its items in the order the API returned them.
 */
export async function callViews(api: string, password: string, wire: WireSip[]): Promise<Map<string, ViewItem[]>> {
  const token = await adminToken(api, password);
  const views = new Map<string, ViewItem[]>();
  const fromMs = Math.floor(Math.min(...wire.map((w) => w.timestampUs)) / 1000) - 60_000;
  const toMs = Math.ceil(Math.max(...wire.map((w) => w.timestampUs)) / 1000) + 60_000;
  for (const callId of new Set(wire.filter((w) => expectedTable(w.cseqMethod) === "call").map((w) => w.callId))) {
    const r = await fetch(`${api}/transactions/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ session_id: callId, timestamp: { from: fromMs, to: toMs } }),
    });
    if (!r.ok) throw new Error(`call view of ${callId} answered ${r.status}: ${await r.text()}`);
    views.set(callId, ((await r.json()) as { data: { items: ViewItem[] } }).data.items);
  }
  return views;
}

/** A wire message the agent mirrored, with the HEP time of its datagram and the datagram's place in the capture. */
export interface Sent {
  w: WireSip;
  tsUs: number;
  seq: number;
}

/**
 * Per Call-ID, the wire messages the agent mirrored, ordered by the HEP time of their datagram, then
 * by the datagram's place in the capture. A datagram is paired with the first unpaired wire message
 * with the same payload; datagrams without one (not SIP, or not on the wire) are left out.
 */
export function sentOrder(hep: HepDatagram[], wire: WireSip[]): Map<string, Sent[]> {
  const byPayload = new Map<string, WireSip[]>();
  for (const w of wire)
    if (w.payloadHex !== undefined) byPayload.set(w.payloadHex, [...(byPayload.get(w.payloadHex) ?? []), w]);
  const sent: Sent[] = [];
  hep.forEach((h, seq) => {
    const w = h.payloadHex === undefined ? undefined : byPayload.get(h.payloadHex)?.shift();
    if (w && h.timestampUs !== undefined) sent.push({ w, tsUs: h.timestampUs, seq });
  });
  sent.sort((a, b) => a.tsUs - b.tsUs || a.seq - b.seq);
  const calls = new Map<string, Sent[]>();
  for (const s of sent) calls.set(s.w.callId, [...(calls.get(s.w.callId) ?? []), s]);
  return calls;
}

/** Consecutive messages of one call with the same capture time: only the row's id orders them. */
export function sameTimePairs(calls: Map<string, Sent[]>): number {
  let n = 0;
  for (const msgs of calls.values()) for (let i = 1; i < msgs.length; i++) if (msgs[i]!.tsUs === msgs[i - 1]!.tsUs) n++;
  return n;
}
