import { SIP_METHODS } from "./filters.ts";

/**
 * The words and value shapes the regex parser (phrases.ts; docs/MCP.md "Filters") matches: filler
 * and label words, SIP methods, reason phrases and response codes, call outcomes, user-agent
 * vendors, and how a value, an address or a Call-ID looks.
 */
/** Filler: never a filter, never reported as ignored (English and German). */
export const STOP_WORDS = new Set(
  (
    "show shows me my the all any every call calls please pls list find get give display search look lookup up for of in on at " +
    "with and or a an are is was were there which what who how many did do does i we you can could would need want see sip " +
    "message messages packets traffic requests request entries rows results records events that those these this it just only " +
    "zeige zeig mir alle alles die der das den dem des ein eine einen einer bitte anrufe anruf gespräche gespräch telefonate " +
    "im und oder mit für liste suche finde gib welche wer wie viele sind gab es hat haben nachrichten pakete nur"
  ).split(" "),
);

/** Words that label something: never a user name or a Call-ID by themselves. */
const KEYWORDS = new Set(
  (
    "from to by von an nach caller callee user users number extension source src destination dst ip address host agent " +
    "today yesterday heute gestern last past since seit letzte letzten letzter hour hours minutes days stunde stunden " +
    "minuten tage tagen responses response replies code codes status between zwischen"
  ).split(" "),
);

export const METHOD_SET = new Set<string>(SIP_METHODS);
/** Also common English words: methods only in capitals or after `method`. */
export const ENGLISH_WORDS = new Set(["ACK", "UPDATE", "INFO", "MESSAGE"]);

/** Reason phrases (RFC 3261 section 21) → code; `single` phrases of one word count alone too. */
export const REASONS: Array<[number, string, boolean]> = [
  [180, "ringing", true],
  [183, "session progress", true],
  [200, "ok", false],
  [401, "unauthorized", true],
  [403, "forbidden", true],
  [404, "not found", true],
  [407, "proxy authentication required", true],
  [408, "request time-?out", true],
  [480, "temporarily unavailable", true],
  [481, "call(?:/| or )transaction does not exist", true],
  [484, "address incomplete", true],
  [486, "busy here", true],
  [487, "request terminated", true],
  [488, "not acceptable here", true],
  [500, "server internal error", true],
  [502, "bad gateway", true],
  [503, "service unavailable", true],
  [504, "server time-?out", true],
  [600, "busy everywhere", true],
  [603, "decline", true],
  [604, "does not exist anywhere", true],
];
/** Codes a bare three-digit number may name (others need a word: "499 responses"). */
export const KNOWN_CODES = new Set([
  100, 180, 181, 183, 200, 202, 301, 302, 401, 402, 403, 404, 405, 406, 407, 408, 410, 415, 420, 480, 481, 482, 483,
  484, 485, 486, 487, 488, 491, 500, 501, 502, 503, 504, 505, 580, 600, 603, 604, 606,
]);

/** Call outcomes (docs/MCP.md "Filters"): final responses to the INVITE. */
export const OUTCOMES: Array<[RegExp, string]> = [
  [/\b(?:busy|besetzte?[nmrs]?|belegte?[nmrs]?)\b/giu, "486;600"],
  [
    /(?<!\b(?:not|nicht|never|nie)\s+)\b(?:failed|failing|failures?|unsuccessful|fehlgeschlagene?[nmrs]?|gescheiterte?[nmrs]?|erfolglose?[nmrs]?)\b/giu,
    "4xx;5xx;6xx",
  ],
  [
    /(?<!\b(?:not|nicht|never|nie|un)\s*)\b(?:answered|successful|succeeded|connected|established|beantwortete?[nmrs]?|angenommene?[nmrs]?|erfolgreiche?[nmrs]?)\b/giu,
    "200",
  ],
  [/(?<!\b(?:not|nicht)\s+)\b(?:cancell?ed|abandoned|abgebrochene?[nmrs]?|stornierte?[nmrs]?)\b/giu, "487"],
  [/(?<!\b(?:not|nicht)\s+)\b(?:rejected|declined|refused|abgelehnte?[nmrs]?|abgewiesene?[nmrs]?)\b/giu, "403;603"],
];

/** User agents by vendor (a `from <vendor>` is a device, not a user); the spelling the products send. */
const VENDORS = (
  "Asterisk FreeSWITCH Kamailio OpenSIPS Polycom PolycomVVX Yealink Cisco Grandstream Snom Linphone Zoiper MicroSIP Bria X-Lite " +
  "Avaya Mitel Fanvil Gigaset Obihai AudioCodes Ribbon Sonus 3CX Jitsi Baresip PJSIP Twinkle Ekiga Aastra Panasonic Alcatel " +
  "Unify Sipgate Huawei Tiptel Auerswald Patton Sangoma Digium BroadSoft Metaswitch SIPp"
).split(" ");
export const VENDOR_RE = VENDORS.join("|");

export const VALUE = String.raw`("[^"]+"|'[^']+'|[^\s,;"'?!()]+)`;
export const SEP = String.raw`\s*(?:[:=]\s*|\bis\s+|\s)\s*`;
const IPV4 = String.raw`(?:\d{1,3}\.){3}\d{1,3}`;
const IPV6 = String.raw`\[?(?:[0-9a-fA-F]{0,4}:){2,7}[0-9a-fA-F]{0,4}\]?`;
export const IP = `(${IPV4}|${IPV6})`;
export const METHOD_WORD = `(${SIP_METHODS.join("|")})S?`;

export const isIp = (v: string): boolean => {
  const x = v.replace(/^\[|\]$/g, "");
  if (/^\d{1,3}(?:\.\d{1,3}){3}$/.test(x)) return x.split(".").every((o) => Number(o) <= 255);
  return x.includes("::") || x.split(":").length === 8;
};

export const unquote = (v: string): string => (/^(["']).*\1$/.test(v) ? v.slice(1, -1) : v.replace(/[.)]+$/, ""));
/** `sip:1001@pbx`, `<sip:1001@pbx>` or `alice@example.com` → the user (the search's caller/callee hold the user part). */
export const userPart = (v: string): string => {
  const m = /^<?(?:sips?:)?([^@>]+)(?:@[^>]*)?>?$/i.exec(v);
  return m ? m[1]! : v;
};

export function plainValue(raw: string): string | undefined {
  const v = unquote(raw);
  if (/^["']/.test(raw)) return v === "" ? undefined : v;
  const low = v.toLowerCase();
  if (v === "" || STOP_WORDS.has(low) || KEYWORDS.has(low)) return undefined;
  if (
    METHOD_SET.has(v.toUpperCase().replace(/S$/, "")) &&
    (v === v.toUpperCase() || !ENGLISH_WORDS.has(v.toUpperCase().replace(/S$/, "")))
  )
    return undefined;
  return v;
}

export const looksLikeCallId = (v: string): boolean =>
  /[@._:-]/.test(v) || v.length >= 8 || (/\d/.test(v) && /[a-z]/i.test(v) && v.length >= 6);

export function canonicalVendor(v: string): string {
  return VENDORS.find((x) => x.toLowerCase() === v.toLowerCase()) ?? v;
}
