/**
 * The synthetic SIP traffic of the search benchmark, as DuckDB SQL relations (no rows pass through
 * JS). Every value is a pure function of a call / registration / keepalive index, so the generator
 * can write any slice of the week as one Parquet file and re-derive sample targets afterwards.
 *
 * Shape (a mid-size carrier edge, uniform arrivals, no diurnal curve):
 *  - hep_proto_1_call: one call = A leg UAC ↔ proxy, 25 % also a B leg proxy ↔ gateway whose
 *    Call-ID is the A leg's + "_b2b-1" (a default `coordinator.correlation.b2bua_suffixes` entry).
 *    80 % answered: INVITE, 100, 180, 200, ACK, BYE, 200 (7 messages per leg); 20 % busy:
 *    INVITE, 100, 180, 486, ACK (5). ≈ 8.25 rows per call.
 *  - hep_proto_1_registration: 100 k users re-register every hour; 25 % are challenged first
 *    (REGISTER, 401, REGISTER, 200), the rest send REGISTER with credentials and get 200.
 *  - hep_proto_1_default: OPTIONS keepalives between the 4 proxies and 24 gateways, with 200.
 * Users: 100 k numbers; IPs: 300 endpoints, 4 proxies, 24 gateways. Payloads are full SIP
 * messages (RFC 3261 §7) with SDP (RFC 4566) on INVITE and 200/INVITE; data_extra carries the keys
 * src/ingest/hep/rows.ts writes for such a message, in the same order.
 */

/** Rows per call, per registration and per keepalive on average (used to size the index ranges). */
export const ROWS_PER_CALL = (0.8 * 7 + 0.2 * 5) * 1.25;
export const ROWS_PER_REGISTRATION = 0.25 * 4 + 0.75 * 2;
export const ROWS_PER_KEEPALIVE = 2;

export const USERS = 100_000;
export const DOMAIN = "voip.example.com";

/**
 * A time slice of one table, as the appliance's files hold them (rows by capture time: flush files
 * by arrival, compacted files merging time-adjacent flush files): the rows of indexes [i0, i1)
 * whose time lies in [fromUs, toUs). The index range starts early enough to take in the late
 * messages (BYE, 200) of calls that began before the slice; rows outside the slice are dropped,
 * never moved, so no two rows share a time by construction and a call still in progress at the
 * end of the data set simply has no later rows yet.
 */
export interface Slice {
  i0: number;
  i1: number;
  fromUs: number;
  toUs: number;
}

/** The longest time from a unit's base time to its last row (call: ring + duration + offsets). */
export const MAX_SPAN_US = 16_000_000 + 600_000_000 + 1_000_000;

/** Index i happens at startUs + i * spacingUs (+ jitter below one spacing). */
export interface Timeline {
  startUs: number;
  spacingUs: number;
}

const CRLF = "'\r\n'";
const q = (s: string) => `'${s.replaceAll("'", "''")}'`;
/** `concat` skips NULLs: optional header lines are `CASE WHEN … THEN line END`. */
const line = (...parts: string[]) => `${parts.join(" || ")} || ${CRLF}`;
const when = (cond: string, ...parts: string[]) => `CASE WHEN ${cond} THEN ${line(...parts)} END`;

const USER_AGENTS = [
  "Yealink SIP-T46U 108.86.0.20",
  "Polycom/6.4.3.4039 PolycomVVX-VVX_450-UA/6.4.3.4039",
  "Grandstream GXP2170 1.0.11.23",
  "Linphone/5.2.0 (belle-sip/5.2.0)",
  "MicroSIP/3.21.3",
  "Cisco-CP8865/14.1.1",
  "Zoiper rv2.10.19.2",
  "snom D785/10.1.141.13",
];
const PROXY_AGENT = "edge-proxy/5.7.4 (x86_64/linux)";
const GATEWAY_AGENT = "pstn-gw/1.10.11";
const uaList = `[${USER_AGENTS.map(q).join(", ")}]`;

/** Index `n` → the n-th endpoint address (300 of them). */
const endpointIp = (n: string) => `'172.16.' || ((${n}) // 100)::VARCHAR || '.' || (10 + (${n}) % 100)::VARCHAR`;
const userNumber = (n: string) => `'49301' || lpad(((${n}) % ${USERS})::VARCHAR, 5, '0')`;
const hex16 = (h: string) => `lpad(lower(to_hex(${h})), 16, '0')`;
/** Keeps the rows of relation `m` whose time lies in the slice. */
const inSlice = (s: Slice) => `WHERE ts_us >= ${s.fromUs} AND ts_us < ${s.toUs}`;
const baseTime = (t: Timeline, salt: number) =>
  `${t.startUs} + floor(i * ${t.spacingUs})::BIGINT + (hash(i, ${salt}) % ${Math.max(1, Math.floor(t.spacingUs))})::BIGINT`;

/** UUIDv7 (RFC 9562 §5.7) from the row time in µs and a row hash, as the writer's rows carry. */
const uuidV7 = (tsUs: string, h: string) => {
  const ms = `lpad(lower(to_hex((${tsUs}) // 1000)), 12, '0')`;
  const r = hex16(h);
  return `substr(${ms}, 1, 8) || '-' || substr(${ms}, 9, 4) || '-7' || substr(${r}, 1, 3) || '-' || substr('89ab', 1 + (${h} % 4)::INTEGER, 1) || substr(${r}, 4, 3) || '-' || substr(${r}, 7, 10) || substr(${hex16(`hash(${h})`)}, 1, 2)`;
};

/** The base columns (tables.ts BASE) from a relation `m` with the per-row fields named below. */
function baseColumns(uuidHash: string): string {
  return `${uuidV7("ts_us", uuidHash)} AS uuid,
    make_timestamp(ts_us) AS "timestamp",
    make_timestamp(ts_us)::DATE AS "date",
    call_id AS session_id,
    caller, callee,
    CASE WHEN fwd THEN s1_ip ELSE s2_ip END AS src_ip,
    CASE WHEN fwd THEN s2_ip ELSE s1_ip END AS dst_ip,
    (CASE WHEN fwd THEN s1_port ELSE s2_port END)::INTEGER AS src_port,
    (CASE WHEN fwd THEN s2_port ELSE s1_port END)::INTEGER AS dst_port,
    ev AS event,
    CASE WHEN code IS NULL THEN ev END AS method,
    code::INTEGER AS response_code,
    cmeth AS cseq_method,
    1::INTEGER AS proto_type,
    tp AS protocol,
    node::BIGINT AS node_id,
    NULL::VARCHAR AS cid`;
}

/**
 * SIP text of one row of `m`: request or status line, Via of side 1 (requests all flow side 1 →
 * side 2), From/To/Call-ID/CSeq, optional Contact/Allow/Supported, User-Agent or Server, body.
 */
function payloadSql(o: {
  fromUri: string;
  fromName: string;
  toUri: string;
  ruri: string;
  extraLines?: string[];
}): string {
  const isReq = "code IS NULL";
  return `concat(
    CASE WHEN ${isReq} THEN ${line("ev", `' ' || ${o.ruri} || ' SIP/2.0'`)} ELSE ${line("'SIP/2.0 '", "code::VARCHAR", "' '", "reason")} END,
    ${line("'Via: SIP/2.0/'", "tp", "' '", "s1_ip", "':'", "s1_port::VARCHAR", "';branch=z9hG4bK'", "branch", `CASE WHEN ${isReq} THEN ';rport' ELSE ';rport=' || s1_port::VARCHAR || ';received=' || s1_ip END`)},
    ${when(isReq, "'Max-Forwards: 70'")},
    ${line(`'From: "' || ${o.fromName} || '" <' || ${o.fromUri} || '>;tag=' || ftag`)},
    ${line(`'To: <' || ${o.toUri} || '>' || CASE WHEN has_ttag THEN ';tag=' || ttag ELSE '' END`)},
    ${line("'Call-ID: '", "call_id")},
    ${line("'CSeq: '", "cseq::VARCHAR", "' '", "cmeth")},
    ${when("contact IS NOT NULL", "'Contact: <'", "contact", "'>'", "contact_params")},
    ${(o.extraLines ?? []).join(",\n    ")}${o.extraLines?.length ? "," : ""}
    CASE WHEN ${isReq} THEN ${line("'User-Agent: '", "agent")} ELSE ${line("'Server: '", "agent")} END,
    ${when("sdp IS NOT NULL", "'Content-Type: application/sdp'")},
    ${line("'Content-Length: '", "coalesce(length(sdp), 0)::VARCHAR")},
    ${CRLF},
    sdp)`;
}

/** data_extra as src/ingest/hep/rows.ts writeSipRow builds it (JSON.stringify key order). */
function dataExtraSql(registration: boolean): string {
  const s = (key: string, v: string) => `',"${key}":"' || ${v} || '"'`;
  return `concat('{"node_name":"edge-' || (node - 2000)::VARCHAR || '","capture_id":' || node::VARCHAR,
    ${s("from_tag", "ftag")},
    CASE WHEN has_ttag THEN ${s("to_tag", "ttag")} END,
    CASE WHEN code IS NULL THEN ${s("request_uri", "ruri")} END,
    ${s("user_agent", "agent")},
    ${s("via_branch", "'z9hG4bK' || branch")},
    ',"cseq":' || cseq::VARCHAR,
    CASE WHEN code IS NOT NULL THEN ${s("reason", "reason")} END,
    ${registration ? "" : `CASE WHEN contact IS NOT NULL THEN ${s("contact", "contact")} END,`}
    CASE WHEN code IS NULL AND ruri_user IS NOT NULL THEN ${s("ruri_user", "ruri_user")} END,
    CASE WHEN sdp IS NOT NULL THEN ',"content_type":"application/sdp"' END,
    '}')`;
}

const sdpSql = (ip: string, port: string, sess: string) =>
  `concat(${[
    "'v=0'",
    `'o=- ' || ${sess} || ' ' || ${sess} || ' IN IP4 ' || ${ip}`,
    "'s=-'",
    `'c=IN IP4 ' || ${ip}`,
    "'t=0 0'",
    `'m=audio ' || ${port} || ' RTP/AVP 0 8 9 18 101'`,
    "'a=rtpmap:0 PCMU/8000'",
    "'a=rtpmap:8 PCMA/8000'",
    "'a=rtpmap:9 G722/8000'",
    "'a=rtpmap:18 G729/8000'",
    "'a=fmtp:18 annexb=no'",
    "'a=rtpmap:101 telephone-event/8000'",
    "'a=fmtp:101 0-16'",
    "'a=ptime:20'",
    "'a=sendrecv'",
  ]
    .map((l) => `${l} || ${CRLF}`)
    .join(", ")})`;

/**
 * Steps of a call leg: k, answered (which call outcome), event, status code, reason, CSeq method
 * and number, direction (side 1 → 2), SDP, To-tag, transaction (branch), time = base µs +
 * ring × rm + duration × dm.
 */
const CALL_STEPS = `(VALUES
  (0, true,  'INVITE', NULL, NULL,        'INVITE', 1, true,  true,  false, 0, 0,     0, 0),
  (1, true,  '100',    100,  'Trying',    'INVITE', 1, false, false, false, 0, 15000, 0, 0),
  (2, true,  '180',    180,  'Ringing',   'INVITE', 1, false, false, true,  0, 300000, 0, 0),
  (3, true,  '200',    200,  'OK',        'INVITE', 1, false, true,  true,  0, 0,     1, 0),
  (4, true,  'ACK',    NULL, NULL,        'ACK',    1, true,  false, true,  4, 40000, 1, 0),
  (5, true,  'BYE',    NULL, NULL,        'BYE',    2, true,  false, true,  5, 0,     1, 1),
  (6, true,  '200',    200,  'OK',        'BYE',    2, false, false, true,  5, 25000, 1, 1),
  (0, false, 'INVITE', NULL, NULL,        'INVITE', 1, true,  true,  false, 0, 0,     0, 0),
  (1, false, '100',    100,  'Trying',    'INVITE', 1, false, false, false, 0, 15000, 0, 0),
  (2, false, '180',    180,  'Ringing',   'INVITE', 1, false, false, true,  0, 300000, 0, 0),
  (3, false, '486',    486,  'Busy Here', 'INVITE', 1, false, false, true,  0, 0,     1, 0),
  (4, false, 'ACK',    NULL, NULL,        'ACK',    1, true,  false, true,  0, 20000, 1, 0)
) s(k, answered, ev, code, reason, cmeth, cseq, fwd, has_sdp, has_ttag, txn, base, rm, dm)`;

/** Per-call values (index i). Shared by the rows and by the sample query of the generator. */
export function callFields(t: Timeline): string {
  return `i,
    ${baseTime(t, 1)} AS t0,
    md5(i::VARCHAR) AS h,
    hash(i, 2) % 4 = 0 AS b2b,
    hash(i, 3) % 5 <> 0 AS answered,
    1000000 + (hash(i, 4) % 14000000)::BIGINT AS ring,
    5000000 + (hash(i, 5) % 595000000)::BIGINT AS dur,
    ${userNumber("hash(i, 6)")} AS caller,
    ${userNumber("hash(i, 7)")} AS callee,
    ${endpointIp("hash(i, 8) % 300")} AS uac_ip,
    (hash(i, 9) % 4)::INTEGER AS px,
    '10.0.1.' || (21 + hash(i, 10) % 24)::VARCHAR AS gw_ip,
    (1024 + hash(i, 11) % 64000)::INTEGER AS uport,
    CASE WHEN hash(i, 12) % 10 = 0 THEN 'TCP' ELSE 'UDP' END AS tp,
    list_element(${uaList}, 1 + (hash(i, 13) % ${USER_AGENTS.length})::INTEGER) AS ua`;
}

/** The A-leg Call-ID of call `i` (random-looking: 20 hex digits @ the UAC address). */
export const CALL_ID_SQL = `substr(h, 1, 20) || '@' || uac_ip`;

export function callSource(t: Timeline, s: Slice): string {
  return `WITH calls AS (SELECT ${callFields(t)} FROM range(${s.i0}, ${s.i1}) r(i)),
  legs AS (
    SELECT c.*, l.leg,
      CASE WHEN l.leg = 0 THEN ${CALL_ID_SQL} ELSE ${CALL_ID_SQL} || '_b2b-1' END AS call_id,
      '10.0.0.' || (11 + px)::VARCHAR AS px_ip,
      CASE WHEN l.leg = 0 THEN uac_ip ELSE '10.0.0.' || (11 + px)::VARCHAR END AS s1_ip,
      CASE WHEN l.leg = 0 THEN uport ELSE 5060 END AS s1_port,
      CASE WHEN l.leg = 0 THEN '10.0.0.' || (11 + px)::VARCHAR ELSE gw_ip END AS s2_ip,
      5060 AS s2_port,
      CASE WHEN l.leg = 0 THEN '${DOMAIN}' ELSE gw_ip END AS rhost,
      substr(h, 21 + 4 * l.leg, 8) AS ftag,
      substr(${hex16("hash(i, 14, l.leg)")}, 1, 10) AS ttag,
      2001 + px AS node
    FROM calls c JOIN (VALUES (0), (1)) l(leg) ON l.leg = 0 OR c.b2b
  ),
  m AS (
    SELECT legs.*, s.* EXCLUDE (answered),
      t0 + s.base + s.rm * ring + s.dm * dur + legs.leg * CASE WHEN s.fwd THEN 10000 ELSE -5000 END AS ts_us,
      substr(${hex16("hash(i, 15, legs.leg, s.txn)")}, 1, 14) AS branch,
      'sip:' || callee || '@' || rhost AS ruri,
      callee AS ruri_user,
      CASE WHEN s.fwd THEN CASE WHEN legs.leg = 0 THEN ua ELSE '${PROXY_AGENT}' END
           ELSE CASE WHEN legs.leg = 0 THEN '${PROXY_AGENT}' ELSE '${GATEWAY_AGENT}' END END AS agent,
      CASE WHEN s.ev = 'INVITE' THEN 'sip:' || caller || '@' || s1_ip || ':' || s1_port::VARCHAR
           WHEN s.cmeth = 'INVITE' AND s.code IN (180, 200) THEN 'sip:' || callee || '@' || s2_ip || ':5060' END AS contact,
      '' AS contact_params,
      CASE WHEN s.has_sdp THEN ${sdpSql("CASE WHEN s.fwd THEN s1_ip ELSE s2_ip END", "(10000 + 2 * (hash(i, 16, legs.leg, s.fwd) % 10000))::VARCHAR", "(hash(i, 17) % 1000000000)::VARCHAR")} END AS sdp
    FROM legs JOIN ${CALL_STEPS} ON s.answered = legs.answered
  )
  SELECT ${baseColumns("hash(i, leg, k, 18)")},
    ${payloadSql({
      fromUri: `'sip:' || caller || '@${DOMAIN}'`,
      fromName: "caller",
      toUri: `'sip:' || callee || '@${DOMAIN}'`,
      ruri: "ruri",
      extraLines: [
        `CASE WHEN ev = 'INVITE' OR (code = 200 AND cmeth = 'INVITE') THEN ${line("'Allow: INVITE, ACK, CANCEL, BYE, REFER, OPTIONS, NOTIFY, PRACK, INFO, UPDATE'")} || ${line("'Supported: replaces, timer'")} END`,
        `CASE WHEN ev = 'INVITE' THEN ${line("'Session-Expires: 1800'")} END`,
      ],
    })} AS payload,
    ${dataExtraSql(false)} AS data_extra
  FROM m ${inSlice(s)}`;
}

const REG_STEPS = `(VALUES
  (0, true,  'REGISTER', NULL, NULL,           1, true,  false, 0),
  (1, true,  '401',      401,  'Unauthorized', 1, false, true,  60000),
  (2, true,  'REGISTER', NULL, NULL,           2, true,  false, 120000),
  (3, true,  '200',      200,  'OK',           2, false, true,  190000),
  (2, false, 'REGISTER', NULL, NULL,           1, true,  false, 0),
  (3, false, '200',      200,  'OK',           1, false, true,  70000)
) s(k, challenged, ev, code, reason, cseq, fwd, has_ttag, base)`;

/** Registration table (tables.ts BASE + aor, contact, expires, user_agent). */
export function registrationSource(t: Timeline, s: Slice): string {
  return `WITH r AS (
    SELECT i, ${baseTime(t, 31)} AS t0, md5(i::VARCHAR || 'r') AS h,
      ${userNumber("hash(i, 32)")} AS caller,
      ${endpointIp("hash(i, 33) % 300")} AS s1_ip,
      (1024 + hash(i, 34) % 64000)::INTEGER AS s1_port,
      '10.0.0.' || (11 + hash(i, 35) % 4)::VARCHAR AS s2_ip,
      2001 + (hash(i, 35) % 4)::INTEGER AS node,
      hash(i, 36) % 4 = 0 AS challenged,
      CASE WHEN hash(i, 37) % 10 = 0 THEN 'TCP' ELSE 'UDP' END AS tp,
      list_element(${uaList}, 1 + (hash(i, 38) % ${USER_AGENTS.length})::INTEGER) AS ua
    FROM range(${s.i0}, ${s.i1}) r(i)
  ),
  m AS (
    SELECT r.*, s.* EXCLUDE (challenged), caller AS callee, 5060 AS s2_port,
      t0 + s.base AS ts_us,
      substr(h, 1, 16) || '@' || s1_ip AS call_id,
      substr(h, 17, 8) AS ftag,
      substr(${hex16("hash(i, 39)")}, 1, 10) AS ttag,
      substr(${hex16("hash(i, 40, s.cseq)")}, 1, 14) AS branch,
      'REGISTER' AS cmeth,
      'sip:${DOMAIN}' AS ruri,
      NULL::VARCHAR AS ruri_user,
      CASE WHEN s.fwd THEN ua ELSE '${PROXY_AGENT}' END AS agent,
      CASE WHEN s.code = 401 THEN NULL ELSE 'sip:' || caller || '@' || s1_ip || ':' || s1_port::VARCHAR END AS contact,
      ';expires=3600' AS contact_params,
      NULL::VARCHAR AS sdp
    FROM r JOIN ${REG_STEPS} ON s.challenged = r.challenged
  )
  SELECT ${baseColumns("hash(i, k, 41)")},
    ${payloadSql({
      fromUri: `'sip:' || caller || '@${DOMAIN}'`,
      fromName: "caller",
      toUri: `'sip:' || caller || '@${DOMAIN}'`,
      ruri: "ruri",
      extraLines: [
        `CASE WHEN code = 401 THEN ${line(`'WWW-Authenticate: Digest realm="${DOMAIN}", nonce="' || substr(h, 1, 24) || '", algorithm=MD5, qop="auth"'`)} END`,
        `CASE WHEN ev = 'REGISTER' AND cseq = 2 OR ev = 'REGISTER' AND NOT challenged THEN ${line(`'Authorization: Digest username="' || caller || '", realm="${DOMAIN}", nonce="' || substr(h, 1, 24) || '", uri="sip:${DOMAIN}", response="' || substr(h, 8, 24) || '", algorithm=MD5'`)} END`,
        `CASE WHEN ev = 'REGISTER' THEN ${line("'Expires: 3600'")} END`,
      ],
    })} AS payload,
    ${dataExtraSql(true)} AS data_extra,
    'sip:' || caller || '@${DOMAIN}' AS aor,
    contact,
    CASE WHEN contact IS NOT NULL THEN 3600 END::INTEGER AS expires,
    agent AS user_agent
  FROM m ${inSlice(s)}`;
}

const KEEPALIVE_STEPS = `(VALUES
  (0, 'OPTIONS', NULL, NULL, true,  false, 0),
  (1, '200',     200,  'OK', false, true,  4000)
) s(k, ev, code, reason, fwd, has_ttag, base)`;

/** Default table: OPTIONS keepalives proxy → gateway and their 200. */
export function defaultSource(t: Timeline, s: Slice): string {
  return `WITH o AS (
    SELECT i, ${baseTime(t, 51)} AS t0, md5(i::VARCHAR || 'o') AS h,
      (hash(i, 52) % 4)::INTEGER AS px,
      '10.0.1.' || (21 + hash(i, 53) % 24)::VARCHAR AS s2_ip
    FROM range(${s.i0}, ${s.i1}) r(i)
  ),
  m AS (
    SELECT o.*, s.*,
      t0 + s.base AS ts_us,
      '10.0.0.' || (11 + px)::VARCHAR AS s1_ip, 5060 AS s1_port, 5060 AS s2_port, 2001 + px AS node,
      substr(h, 1, 24) || '@10.0.0.' || (11 + px)::VARCHAR AS call_id,
      'ping' AS caller, NULL::VARCHAR AS callee,
      substr(h, 25, 8) AS ftag, substr(${hex16("hash(i, 54)")}, 1, 10) AS ttag,
      substr(${hex16("hash(i, 55)")}, 1, 14) AS branch,
      'OPTIONS' AS cmeth, 1 AS cseq, 'UDP' AS tp,
      'sip:' || s2_ip || ':5060' AS ruri, NULL::VARCHAR AS ruri_user,
      CASE WHEN s.fwd THEN '${PROXY_AGENT}' ELSE '${GATEWAY_AGENT}' END AS agent,
      NULL::VARCHAR AS contact, '' AS contact_params, NULL::VARCHAR AS sdp
    FROM o JOIN ${KEEPALIVE_STEPS} ON true
  )
  SELECT ${baseColumns("hash(i, k, 56)")},
    ${payloadSql({ fromUri: "'sip:ping@' || s1_ip", fromName: "'ping'", toUri: "'sip:' || s2_ip", ruri: "ruri" })} AS payload,
    ${dataExtraSql(false)} AS data_extra
  FROM m ${inSlice(s)}`;
}
