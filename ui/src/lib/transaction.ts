/**
 * Models of the transaction window, computed in the browser from `POST /transactions/messages`:
 * the call summary (status, setup delay, duration, codecs); the ladder is ladder-model.ts. Pure;
 * see transaction.test.ts.
 */
import type { Static } from "@sinclair/typebox";
import type { TransactionMessageSchema } from "../../../src/api/search/model.ts";
import { sipLabel } from "./format.ts";

/** A message of `POST /transactions/messages`: the server's schema (src/api/search/model.ts). */
export type TxRow = Static<typeof TransactionMessageSchema>;

/**
 * The members of a row that a message received over the live stream does not have: the lake's
 * columns and what the search adds (docs/CALL-VIEW.md "Live").
 */
type RowOnly =
  | "id"
  | "sid"
  | "timestamp"
  | "date"
  | "cid"
  | "protocol"
  | "data_extra"
  | "src_alias"
  | "dst_alias"
  | "storage_lake"
  | "storage_volume";

/** A message of the call view: a row of the lake's answer, or one built from a live frame (ui/src/txn/live-call.ts). */
export type TxMessage = Omit<TxRow, RowOnly> &
  Partial<Pick<TxRow, RowOnly>> & {
    /** Received over the live stream, not read from the lake (docs/CALL-VIEW.md "Live"). */
    live?: boolean;
    /** Start-line summary (`200 OK`) when there may be no payload to take it from (a live message). */
    label?: string;
  };

/** Codec names of each SDP m= line in a SIP payload: rtpmap names, else RFC 3551 static types. */
export function sdpCodecs(payload: string): string[] {
  const sep = payload.search(/\r?\n\r?\n/);
  if (sep < 0) return [];
  const body = payload.slice(sep).split(/\r?\n/);
  const STATIC: Record<string, string> = {
    "0": "PCMU",
    "3": "GSM",
    "4": "G723",
    "8": "PCMA",
    "9": "G722",
    "18": "G729",
  };
  const out: string[] = [];
  let formats: string[] = [];
  const names = new Map<string, string>();
  const flush = () => {
    for (const f of formats) {
      const n = names.get(f) ?? STATIC[f];
      if (n && !out.includes(n)) out.push(n);
    }
    formats = [];
  };
  for (const line of body) {
    const m = /^m=\w+\s+\d+(?:\/\d+)?\s+\S+\s+(.*)$/.exec(line);
    if (m) {
      flush();
      formats = m[1]!.trim().split(/\s+/);
      continue;
    }
    const r = /^a=rtpmap:(\d+)\s+([^/\s]+)/.exec(line);
    if (r) names.set(r[1]!, r[2]!);
  }
  flush();
  return out;
}

export interface CallSummary {
  status: string;
  /** ok, failed, busy, cancelled, progress */
  tone: "ok" | "failed" | "progress";
  callIds: string[];
  caller: string;
  callee: string;
  firstMs: number;
  lastMs: number;
  finalResponse: string | null;
  /** INVITE → first 18x (post-dial delay). */
  ringingMs: number | null;
  /** INVITE → final response (setup delay). */
  setupMs: number | null;
  /** 2xx to the INVITE → BYE. */
  durationMs: number | null;
  offeredCodecs: string[];
  answeredCodecs: string[];
  userAgents: string[];
  messages: number;
}

const header = (payload: string, name: string): string | undefined => {
  const m = new RegExp(`\\r?\\n${name}\\s*:\\s*([^\\r\\n]*)`, "i").exec(payload);
  return m?.[1]?.trim();
};

const isResponse = (m: TxMessage) => /^\d{3}$/.test(m.event);
const cseqMethod = (m: TxMessage) =>
  (m.cseq_method ?? /\r?\nCSeq\s*:\s*\d+\s+(\w+)/i.exec(m.payload ?? "")?.[1] ?? "").toUpperCase();

/** The call's outcome from the first INVITE transaction (RFC 3261 §13, §17.1.1). */
export function callSummary(messages: readonly TxMessage[]): CallSummary {
  const first = messages[0];
  const last = messages[messages.length - 1];
  const invite = messages.find((m) => m.event.toUpperCase() === "INVITE");
  const inviteResponses = messages.filter(
    (m) => isResponse(m) && cseqMethod(m) === "INVITE" && (!invite || m.session_id === invite.session_id),
  );
  const final = inviteResponses.find((m) => Number(m.event) >= 200);
  const ringing = inviteResponses.find((m) => m.event === "180" || m.event === "183");
  const bye = messages.find((m) => m.event.toUpperCase() === "BYE");
  const cancel = messages.find((m) => m.event.toUpperCase() === "CANCEL");
  const ms = (m: TxMessage | undefined) => (m ? m.timestamp_us / 1000 : null);
  const code = final ? Number(final.event) : null;
  const finalLabel = final ? sipLabel(final.payload ?? "", final.event).label : null;

  let status: string;
  let tone: CallSummary["tone"];
  if (!invite) {
    const lastResp = [...messages].reverse().find(isResponse);
    status = lastResp
      ? `${cseqMethod(lastResp) || "Request"}: ${sipLabel(lastResp.payload ?? "", lastResp.event).label}`
      : "No response";
    tone = lastResp && Number(lastResp.event) < 300 ? "ok" : lastResp ? "failed" : "progress";
  } else if (code !== null && code < 300) {
    status = bye ? "Completed" : "Answered, no BYE seen";
    tone = "ok";
  } else if (code === 486 || code === 600) {
    status = `Busy (${finalLabel})`;
    tone = "failed";
  } else if (code === 487 || (code === null && cancel)) {
    status = "Cancelled";
    tone = "failed";
  } else if (code !== null) {
    status = `Failed (${finalLabel})`;
    tone = "failed";
  } else {
    status = ringing ? "Ringing, no final answer" : "No final answer";
    tone = "progress";
  }

  const inviteMs = ms(invite);
  const finalMs = ms(final);
  const answered = code !== null && code < 300 ? finalMs : null;
  const answerSdp = final && code !== null && code < 300 ? sdpCodecs(final.payload ?? "") : [];
  const userAgents = new Set<string>();
  for (const m of messages) {
    const ua = header(m.payload ?? "", "User-Agent") ?? header(m.payload ?? "", "Server");
    if (ua) userAgents.add(ua);
  }
  return {
    status,
    tone,
    callIds: [...new Set(messages.map((m) => m.session_id))],
    caller: invite?.caller ?? first?.caller ?? "",
    callee: invite?.callee ?? first?.callee ?? "",
    firstMs: ms(first) ?? 0,
    lastMs: ms(last) ?? 0,
    finalResponse: finalLabel,
    ringingMs: inviteMs !== null && ringing ? ringing.timestamp_us / 1000 - inviteMs : null,
    setupMs: inviteMs !== null && finalMs !== null ? finalMs - inviteMs : null,
    durationMs: answered !== null && bye ? bye.timestamp_us / 1000 - answered : null,
    offeredCodecs: invite ? sdpCodecs(invite.payload ?? "") : [],
    answeredCodecs: answerSdp,
    userAgents: [...userAgents],
    messages: messages.length,
  };
}

/**
 * One summary per Call-ID of a view that holds several (a combined view of selected calls, or a
 * call with correlated legs): each Call-ID's own messages summarised on their own, in order of
 * their first message (the order of the ladder's leg colours).
 */
export function summariesByCallId(
  messages: readonly TxMessage[],
): Array<{ callId: string; leg: number; summary: CallSummary }> {
  const groups = new Map<string, TxMessage[]>();
  for (const m of messages) {
    const g = groups.get(m.session_id);
    if (g) g.push(m);
    else groups.set(m.session_id, [m]);
  }
  return [...groups].map(([callId, own], leg) => ({ callId, leg, summary: callSummary(own) }));
}
