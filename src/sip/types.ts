/** Shapes produced by the SIP parser (parse.ts). Plain data: safe to JSON.stringify. */

/** From, To, P-Asserted-Identity (and the base of Contact): RFC 3261 §20.10 name-addr / addr-spec. */
export interface SipAddress {
  /** Display name, unquoted (UTF-8 decoded); undefined when absent or empty. */
  displayName: string | undefined;
  /** URI without <>, as sent (URI parameters included, header parameters excluded). */
  uri: string;
  /** Lower-case scheme: `sip`, `sips`, `tel`, ...; undefined for `*` or a URI without scheme. */
  scheme: string | undefined;
  /** User part as sent (escapes such as %23 kept); for tel: URIs the number. */
  user: string | undefined;
  /** Host without IPv6 brackets. */
  host: string | undefined;
  port: number | undefined;
  /** `tag` header parameter (From/To, RFC 3261 §19.3); undefined when absent. */
  tag: string | undefined;
}

/** First value of the first Contact header. */
export interface SipContact extends SipAddress {
  /** `expires` header parameter of that contact (RFC 3261 §20.10), seconds. */
  expires: number | undefined;
  /** True for `Contact: *` (REGISTER removing all bindings, RFC 3261 §10.2.2); uri is then "*". */
  wildcard: boolean;
}

/** Top Via value (RFC 3261 §20.42). */
export interface SipVia {
  /** Upper-case transport: UDP, TCP, TLS, SCTP, WS, WSS, ... */
  transport: string;
  /** sent-by host without IPv6 brackets. */
  host: string | undefined;
  port: number | undefined;
  branch: string | undefined;
}

export interface SipMessage {
  isRequest: boolean;
  /** Request method for requests; for responses the CSeq method (same as `cseqMethod`). Case as sent. */
  method: string;
  /** Status code for responses, undefined for requests. */
  statusCode: number | undefined;
  /** Reason phrase for responses ("" when the status line has none), undefined for requests. */
  reasonPhrase: string | undefined;
  /** Request-URI as sent, undefined for responses. */
  requestUri: string | undefined;
  ruriUser: string | undefined;
  /** Request-URI host without IPv6 brackets. */
  ruriHost: string | undefined;
  callId: string;
  cseq: number;
  cseqMethod: string;
  from: SipAddress | undefined;
  to: SipAddress | undefined;
  pai: SipAddress | undefined;
  contact: SipContact | undefined;
  via: SipVia | undefined;
  /** Via values over all Via header lines (each comma-separated value counts). */
  viaCount: number;
  /** Expires header, seconds. */
  expires: number | undefined;
  /** User-Agent, else Server. */
  userAgent: string | undefined;
  contentType: string | undefined;
  contentLength: number | undefined;
  maxForwards: number | undefined;
  /** Reason header value as sent (RFC 3326). */
  reason: string | undefined;
  /** Value of the first header of `correlationHeaders` (in list order) present in the message. */
  correlationId: string | undefined;
  /** Configured header name (as configured) → value; several occurrences joined with ", ". */
  customHeaders: Readonly<Record<string, string>>;
  /** Header fields after unfolding, malformed lines excluded. */
  headerCount: number;
  /** Header lines without a colon or without a name; skipped. */
  malformedLines: number;
  /** Byte offset of the body in the payload. */
  bodyOffset: number;
  /** Body bytes: Content-Length when it fits in the payload, else what the payload holds. */
  bodyLength: number;
}

export interface SipParseOptions {
  /** Header names whose values go to `customHeaders` (matched case-insensitively, compact forms too). */
  customHeaders?: readonly string[];
  /** Candidates for `correlationId`, first present wins; default ["X-CID"]. */
  correlationHeaders?: readonly string[];
}

/** Every failure reason of parseSip, for metric registration. */
export const SIP_PARSE_REASONS = [
  "empty",
  "not_sip",
  "bad_start_line",
  "no_header_end",
  "missing_call_id",
  "missing_cseq",
  "bad_cseq",
] as const;

export type SipParseReason = (typeof SIP_PARSE_REASONS)[number];
