/**
 * SIP header names: compact forms and canonical spelling.
 *
 * Header names are case-insensitive (RFC 3261 §7.3.1). Compact forms come from RFC 3261 §7.3.3 and
 * the IANA "Header Fields" registry: a Accept-Contact, j Reject-Contact, d Request-Disposition
 * (RFC 3841), b Referred-By (RFC 3892), r Refer-To (RFC 3515), x Session-Expires (RFC 4028),
 * n Identity-Info (RFC 4474), o Event, u Allow-Events (RFC 6665), y Identity (RFC 8224).
 */

export const COMPACT_HEADER_FORMS: Readonly<Record<string, string>> = Object.freeze({
  a: "Accept-Contact",
  b: "Referred-By",
  c: "Content-Type",
  d: "Request-Disposition",
  e: "Content-Encoding",
  f: "From",
  i: "Call-ID",
  j: "Reject-Contact",
  k: "Supported",
  l: "Content-Length",
  m: "Contact",
  n: "Identity-Info",
  o: "Event",
  r: "Refer-To",
  s: "Subject",
  t: "To",
  u: "Allow-Events",
  v: "Via",
  x: "Session-Expires",
  y: "Identity",
});

/** Usual spelling of registered headers, so the decoded view shows `CSeq`, not `CSEQ` or `cseq`. */
const CANONICAL_SPELLING: ReadonlyMap<string, string> = new Map(
  [
    ...Object.values(COMPACT_HEADER_FORMS),
    "Accept",
    "Accept-Encoding",
    "Accept-Language",
    "Alert-Info",
    "Allow",
    "Authentication-Info",
    "Authorization",
    "Call-Info",
    "Content-Disposition",
    "Content-Language",
    "CSeq",
    "Date",
    "Diversion",
    "Error-Info",
    "Expires",
    "History-Info",
    "In-Reply-To",
    "Max-Forwards",
    "MIME-Version",
    "Min-Expires",
    "Min-SE",
    "Organization",
    "P-Access-Network-Info",
    "P-Asserted-Identity",
    "P-Called-Party-ID",
    "P-Charging-Vector",
    "P-Preferred-Identity",
    "Path",
    "Priority",
    "Privacy",
    "Proxy-Authenticate",
    "Proxy-Authorization",
    "Proxy-Require",
    "RAck",
    "Reason",
    "Record-Route",
    "Remote-Party-ID",
    "Replaces",
    "Reply-To",
    "Require",
    "Retry-After",
    "Route",
    "RSeq",
    "Server",
    "Service-Route",
    "SIP-ETag",
    "SIP-If-Match",
    "Subscription-State",
    "Timestamp",
    "Unsupported",
    "User-Agent",
    "Warning",
    "WWW-Authenticate",
  ].map((name) => [name.toLowerCase(), name]),
);

/** Full name for a compact form, else the name itself (`i` → `Call-ID`, `X-Foo` → `X-Foo`). */
export function expandCompactName(name: string): string {
  return name.length === 1 ? (COMPACT_HEADER_FORMS[name.toLowerCase()] ?? name) : name;
}

/** Canonical display name: compact forms expanded, registered names in their usual spelling, others as sent. */
export function canonicalHeaderName(name: string): string {
  const full = expandCompactName(name);
  return CANONICAL_SPELLING.get(full.toLowerCase()) ?? full;
}

/** Lower-case full name used to compare header names (`I` and `call-id` → `call-id`). */
export function headerKey(name: string): string {
  return expandCompactName(name.trim()).toLowerCase();
}
