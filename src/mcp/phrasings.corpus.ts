/**
 * What engineers type into Ask, with the filters the regex parser must make of it (docs/MCP.md
 * "Filters"), read by phrasings.test.ts. `time` defaults to `last_hour` (no time words), `ignored`
 * to none, `understood` to true. Add a line for every phrasing a user reports as misread.
 */
import type { NlFilters } from "./filters.ts";

export interface Phrasing {
  text: string;
  filters: Omit<NlFilters, "time_range_label" | "from_ms" | "to_ms">;
  time?: string;
  ignored?: string[];
  understood?: boolean;
}

const BUSY = { response_code: "486;600", cseq_method: "INVITE" };
const FAILED = { response_code: "4xx;5xx;6xx", cseq_method: "INVITE" };
const ANSWERED = { response_code: "200", cseq_method: "INVITE" };
const CANCELLED = { response_code: "487", cseq_method: "INVITE" };
const REJECTED = { response_code: "403;603", cseq_method: "INVITE" };
const CALL_ID = "a84b4c76e66710@pc33.atlanta.example";

export const PHRASINGS: Phrasing[] = [
  // The four questions that used to list the whole range.
  { text: "INVITEs from 1001 in the last hour", filters: { method: "INVITE", from_user: "1001" } },
  { text: "show busy calls today", filters: BUSY, time: "today" },
  { text: "486 responses today", filters: { response_code: "486" }, time: "today" },
  { text: `show me call ${CALL_ID}`, filters: { call_id: CALL_ID } },
  // Callers and callees.
  { text: "from 1001", filters: { from_user: "1001" } },
  { text: "to 2002", filters: { to_user: "2002" } },
  { text: "calls from alice", filters: { from_user: "alice" } },
  { text: "1001 to 2002", filters: { from_user: "1001", to_user: "2002" } },
  { text: "calls from 1001 to 2002 yesterday", filters: { from_user: "1001", to_user: "2002" }, time: "yesterday" },
  { text: "by 1001", filters: { from_user: "1001" } },
  { text: "INVITE from caller 1001 in the last hour", filters: { method: "INVITE", from_user: "1001" } },
  { text: "from_user 1001 callee 2002", filters: { from_user: "1001", to_user: "2002" } },
  { text: "invites to_user=bob", filters: { method: "INVITE", to_user: "bob" } },
  { text: "calls from 1001 or 1002", filters: { from_user: "1001;1002" } },
  { text: "who called 2002?", filters: { to_user: "2002" } },
  { text: "calls from sip:1001@pbx.example", filters: { from_user: "1001" } },
  { text: "1001 calling 2002", filters: { from_user: "1001", to_user: "2002" } },
  { text: "who is calling 2002 today", filters: { to_user: "2002" }, time: "today" },
  { text: "INVITE from alice@example.com", filters: { method: "INVITE", from_user: "alice" } },
  {
    text: "show me all calls from 1001 to 2002 that failed yesterday",
    filters: { ...FAILED, from_user: "1001", to_user: "2002" },
    time: "yesterday",
  },
  // Call outcomes.
  { text: "busy calls from 1001", filters: { ...BUSY, from_user: "1001" } },
  { text: "failed calls", filters: FAILED },
  { text: "show me the failed calls of the last 30 minutes", filters: FAILED, time: "last_30_minutes" },
  { text: "answered calls to 2002", filters: { ...ANSWERED, to_user: "2002" } },
  { text: "cancelled calls", filters: CANCELLED },
  { text: "canceled calls from alice today", filters: { ...CANCELLED, from_user: "alice" }, time: "today" },
  { text: "rejected calls", filters: REJECTED },
  { text: "busy INVITEs", filters: BUSY },
  {
    text: "failed registrations today",
    filters: { response_code: "4xx;5xx;6xx", cseq_method: "REGISTER" },
    time: "today",
  },
  { text: "show the last 200 calls", filters: {}, ignored: ["last", "200"], understood: false },
  // Response codes and classes.
  { text: "4xx", filters: { response_code: "4xx" } },
  { text: "5xx errors", filters: { response_code: "5xx" } },
  { text: "server errors today", filters: { response_code: "5xx" }, time: "today" },
  { text: "client errors", filters: { response_code: "4xx" } },
  { text: "response code 503", filters: { response_code: "503" } },
  { text: "486 or 603 responses", filters: { response_code: "486;603" } },
  { text: "show 404 today", filters: { response_code: "404" }, time: "today" },
  { text: "503 Service Unavailable in the last 2 hours", filters: { response_code: "503" }, time: "last_2_hours" },
  { text: "486 Busy Here", filters: { response_code: "486" } },
  { text: "401 responses to REGISTER", filters: { response_code: "401", cseq_method: "REGISTER" } },
  { text: "INVITE 407", filters: { response_code: "407", cseq_method: "INVITE" } },
  { text: "errors from 10.0.0.5", filters: { response_code: "4xx;5xx;6xx", src_ip: "10.0.0.5" } },
  // Call-IDs.
  { text: `Call-ID ${CALL_ID}`, filters: { call_id: CALL_ID } },
  { text: "call-id: abc-123@host", filters: { call_id: "abc-123@host" } },
  { text: "call_id 'drop table x'", filters: { call_id: "drop table x" } },
  { text: "show sql for call 1-4711@127.0.0.1", filters: { call_id: "1-4711@127.0.0.1" }, ignored: ["sql"] },
  // Addresses.
  { text: "from 10.0.0.1", filters: { src_ip: "10.0.0.1" } },
  { text: "to 192.168.1.20", filters: { dst_ip: "192.168.1.20" } },
  { text: "calls with 10.1.2.3", filters: { ip: "10.1.2.3" } },
  { text: "10.0.0.1 to 10.0.0.2", filters: { src_ip: "10.0.0.1", dst_ip: "10.0.0.2" } },
  { text: "src ip 10.0.0.1 dst ip 10.0.0.2", filters: { src_ip: "10.0.0.1", dst_ip: "10.0.0.2" } },
  {
    text: "source ip: 2001:db8::1 destination ip = 192.168.1.20",
    filters: { src_ip: "2001:db8::1", dst_ip: "192.168.1.20" },
  },
  { text: "OPTIONS from 10.32.0.1", filters: { method: "OPTIONS", src_ip: "10.32.0.1" } },
  // User agents.
  { text: "user agent Asterisk", filters: { user_agent: "Asterisk" } },
  { text: "INVITEs from PolycomVVX", filters: { method: "INVITE", user_agent: "PolycomVVX" } },
  {
    text: "registrations from yealink phones today",
    filters: { method: "REGISTER", user_agent: "Yealink" },
    time: "today",
  },
  { text: 'user-agent "Zoiper rev.5"', filters: { user_agent: "Zoiper rev.5" } },
  // Methods.
  { text: "REGISTER and OPTIONS", filters: { method: "REGISTER;OPTIONS" } },
  { text: "registrations", filters: { method: "REGISTER" } },
  { text: "show all BYEs", filters: { method: "BYE" } },
  { text: "show the message method MESSAGE", filters: { method: "MESSAGE" } },
  { text: "CANCEL callee 4004", filters: { method: "CANCEL", to_user: "4004" } },
  { text: "re-INVITEs", filters: { method: "INVITE" } },
  // Time words.
  { text: "calls in the last 15 minutes", filters: {}, time: "last_15_minutes" },
  { text: "last 3 days", filters: {}, time: "last_3_days" },
  { text: "INVITEs since 10:00", filters: { method: "INVITE" }, time: "since_10:00" },
  { text: "REGISTER between 09:00 and 10:30", filters: { method: "REGISTER" }, time: "between_09:00_and_10:30" },
  { text: "failed calls yesterday", filters: FAILED, time: "yesterday" },
  { text: "last week", filters: {}, time: "last_7_days" },
  { text: "past 24h", filters: {}, time: "last_24_hours" },
  // German.
  { text: "Anrufe von 1001", filters: { from_user: "1001" } },
  { text: "Anrufe an 2002", filters: { to_user: "2002" } },
  { text: "besetzt", filters: BUSY },
  { text: "zeige mir alle besetzten Anrufe heute", filters: BUSY, time: "today" },
  { text: "fehlgeschlagene Anrufe", filters: FAILED },
  { text: "INVITEs von 1001 in der letzten Stunde", filters: { method: "INVITE", from_user: "1001" } },
  { text: "Anrufe gestern", filters: {}, time: "yesterday" },
  { text: "abgelehnte Anrufe von 1001 heute", filters: { ...REJECTED, from_user: "1001" }, time: "today" },
  { text: "beantwortete Anrufe an 2002", filters: { ...ANSWERED, to_user: "2002" } },
  { text: "Registrierungen der letzten 2 Stunden", filters: { method: "REGISTER" }, time: "last_2_hours" },
  { text: "Anrufe seit 8:30 Uhr", filters: {}, time: "since_08:30" },
  { text: "Anrufe zwischen 9 und 10 Uhr", filters: {}, time: "between_09:00_and_10:00" },
  { text: "hangups from 1001 after 2 pm", filters: { method: "BYE", from_user: "1001" }, time: "since_14:00" },
  // Filler only: the whole range, nothing ignored.
  { text: "show all calls", filters: {} },
  { text: "zeige mir alle Anrufe", filters: {} },
  // Words that are listed as ignored.
  {
    text: "please show INVITEs from 1001 with bad audio",
    filters: { method: "INVITE", from_user: "1001" },
    ignored: ["bad", "audio"],
  },
  {
    text: "INVITEs with jitter above 30ms today",
    filters: { method: "INVITE" },
    time: "today",
    ignored: ["jitter", "above", "30ms"],
  },
  { text: "not answered calls", filters: {}, ignored: ["not", "answered"], understood: false },
  { text: "update me about info", filters: {}, ignored: ["update", "about", "info"], understood: false },
  // Refused: nothing maps to a filter.
  { text: "how is the weather", filters: {}, ignored: ["weather"], understood: false },
  { text: "calls with one-way audio", filters: {}, ignored: ["one-way", "audio"], understood: false },
  { text: "Anrufe mit schlechter Qualität", filters: {}, ignored: ["schlechter", "Qualität"], understood: false },
];
