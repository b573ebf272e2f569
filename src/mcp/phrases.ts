import { SIP_METHODS, type NlFilters } from "./filters.ts";
import { timeRange } from "./time-words.ts";
import {
  STOP_WORDS,
  METHOD_SET,
  ENGLISH_WORDS,
  REASONS,
  KNOWN_CODES,
  OUTCOMES,
  VENDOR_RE,
  VALUE,
  SEP,
  IP,
  METHOD_WORD,
  isIp,
  unquote,
  userPart,
  plainValue,
  looksLikeCallId,
  canonicalVendor,
} from "./words.ts";

/**
 * The regex parser (docs/MCP.md "Filters"): what a VoIP engineer types, in English or German,
 * becomes the structured search's filter keys. Each rule takes its words out of the text; the words
 * left that are not filler (STOP_WORDS) are returned as `ignored`, so an answer never silently
 * drops a word. Pure: no I/O. Rules run most specific first (a Call-ID may hold any word; a
 * response phrase "486 Busy Here" before "busy"; addresses and methods before "from <user>").
 */
export interface Understanding {
  filters: NlFilters;
  /** Words (or quoted phrases) no rule used and that are not filler, in text order. */
  ignored: string[];
  /** Some rule matched (a time word counts), or nothing but filler was asked. */
  understood: boolean;
  /** No time words: the range is the default last hour. */
  timeDefault: boolean;
}

class Reader {
  work: string;
  constructor(text: string) {
    this.work = text;
  }
  /** Each match of `re` (global) in the words not yet used; `fn` returns false to leave it. */
  take(re: RegExp, fn: (m: RegExpExecArray) => unknown): void {
    const g = re.global ? re : new RegExp(re.source, `${re.flags}g`);
    for (const m of [...this.work.matchAll(g)]) {
      if (fn(m) === false) continue;
      this.work = this.work.slice(0, m.index) + " ".repeat(m[0].length) + this.work.slice(m.index + m[0].length);
    }
  }
}

/** Adds a `;`-list value without repeating one. */
function add(
  f: NlFilters,
  key:
    | "method"
    | "src_ip"
    | "dst_ip"
    | "ip"
    | "call_id"
    | "from_user"
    | "to_user"
    | "response_code"
    | "cseq_method"
    | "user_agent",
  value: string,
): void {
  const have = f[key] === undefined ? [] : f[key]!.split(";");
  for (const v of value.split(";")) if (!have.includes(v)) have.push(v);
  f[key] = have.join(";");
}

const listOf = (text: string): string[] => text.split(/\s*(?:,|\/|\bor\b|\boder\b)\s*/i).filter((x) => x !== "");

/** The regex parser's reading of `text` at `nowMs` (docs/MCP.md "Filters"). */
export function understand(text: string, nowMs: number): Understanding {
  const f: NlFilters = {};
  const r = new Reader(text);
  let matched = false;
  const hit = () => {
    matched = true;
  };

  // Call-ID: its value may hold any word, so it goes first.
  r.take(new RegExp(String.raw`\b(?:call[-_ ]?id|callid|session[-_ ]?id)${SEP}${VALUE}`, "gi"), (m) => {
    add(f, "call_id", unquote(m[1]!));
    hit();
  });
  r.take(new RegExp(String.raw`\b(?:call|anruf|gespräch)\s+${VALUE}`, "giu"), (m) => {
    const v = plainValue(m[1]!);
    if (v === undefined || !(looksLikeCallId(v) || /^["']/.test(m[1]!)) || isIp(v)) return false;
    add(f, "call_id", v);
    hit();
  });

  // Time words (time-words.ts).
  const time = timeRange(r.work, nowMs, (start, length) => {
    r.work = r.work.slice(0, start) + " ".repeat(length) + r.work.slice(start + length);
  });
  if (time) {
    Object.assign(f, time);
    hit();
  }

  // "responses to INVITE", "INVITE responses": the CSeq method (codes, when named, are read next).
  r.take(
    new RegExp(
      String.raw`(?<=\b(?:responses?|replies|answers|antworten)\s+)(?:to|for|on|auf|zu)\s+${METHOD_WORD}\b`,
      "gi",
    ),
    (m) => {
      add(f, "cseq_method", m[1]!.toUpperCase());
      hit();
    },
  );
  r.take(new RegExp(String.raw`\b${METHOD_WORD}\s+(?=responses?\b|replies\b|antworten\b)`, "gi"), (m) => {
    add(f, "cseq_method", m[1]!.toUpperCase());
    hit();
  });
  // Response codes with their reason phrase, then the phrase alone.
  for (const [code, phrase, single] of REASONS) {
    r.take(new RegExp(String.raw`\b${code}(?:\s+${phrase})?\b(?!\s*(?:\.\d|:))`, "gi"), (m) => {
      if (m[0] === String(code) && !/\s/.test(m[0])) return false; // bare codes come last
      add(f, "response_code", String(code));
      hit();
    });
    if (single || phrase.includes(" ")) {
      r.take(new RegExp(String.raw`\b${phrase}\b`, "gi"), () => {
        add(f, "response_code", String(code));
        hit();
      });
    }
  }
  // Classes and lists of codes with a word that says they are responses.
  const CODE_LIST = String.raw`([1-6](?:\d\d|xx)(?:\s*(?:,|/|\bor\b|\boder\b|\band\b|\bund\b)\s*[1-6](?:\d\d|xx))*)`;
  const codesOf = (s: string) => listOf(s.replace(/\b(?:and|und)\b/gi, ",")).map((c) => c.toLowerCase());
  r.take(
    new RegExp(String.raw`\b(?:response|status|reply|antwort|sip|code)[ _-]?(?:codes?)?${SEP}${CODE_LIST}\b`, "gi"),
    (m) => {
      for (const c of codesOf(m[1]!)) add(f, "response_code", c);
      hit();
    },
  );
  r.take(
    new RegExp(
      String.raw`\b${CODE_LIST}(?:s\b|\s*(?:responses?|replies|answers|antworten|errors?|fehler|codes?)\b|(?<=xx)\b)`,
      "gi",
    ),
    (m) => {
      for (const c of codesOf(m[1]!)) add(f, "response_code", c);
      hit();
    },
  );
  for (const [re, codes] of [
    [/\b(?:client[ -]?(?:errors?|failures?|fehler))\b/gi, "4xx"],
    [/\b(?:server[ -]?(?:errors?|failures?|fehler))\b/gi, "5xx"],
    [/\b(?:global[ -]?(?:errors?|failures?|fehler))\b/gi, "6xx"],
    [/\b(?:redirects?|redirections?|weiterleitungen)\b/gi, "3xx"],
    [/\b(?:provisional(?: responses?)?)\b/gi, "1xx"],
    [/\b(?:error responses?|errors?|fehlermeldungen|fehler)\b/gi, "4xx;5xx;6xx"],
  ] as const) {
    r.take(re, () => {
      add(f, "response_code", codes);
      hit();
    });
  }
  // Call outcomes: final responses to the INVITE.
  let outcome = false;
  for (const [re, codes] of OUTCOMES) {
    r.take(re, () => {
      add(f, "response_code", codes);
      outcome = true;
      hit();
    });
  }
  // Addresses: "10.0.0.1 to 10.0.0.2", labelled source / destination, then either end.
  const ipValue = (v: string) => v.replace(/^\[|\]$/g, "");
  r.take(
    new RegExp(String.raw`(?:\b(?:from|von)\s+)?(?<![\w.:])${IP}\s+(?:to|->|→|an|nach)\s+${IP}(?![\w.:])`, "gi"),
    (m) => {
      if (!isIp(m[1]!) || !isIp(m[2]!)) return false;
      add(f, "src_ip", ipValue(m[1]!));
      add(f, "dst_ip", ipValue(m[2]!));
      hit();
    },
  );
  const ADDR = `(?:[ _-]?(?:ip|address|addr|host|adresse))?`;
  for (const [label, key] of [
    [`src|source|from|von|quelle|sender`, "src_ip"],
    [`dst|dest|destination|to|an|nach|ziel`, "dst_ip"],
    [`ip|host|address|addr|adresse`, "ip"],
  ] as const) {
    r.take(new RegExp(String.raw`\b(?:${label})${ADDR}${SEP}${IP}(?![\w.:])`, "gi"), (m) => {
      if (!isIp(m[1]!)) return false;
      add(f, key, ipValue(m[1]!));
      hit();
    });
  }
  r.take(new RegExp(String.raw`(?<![\w.:@])${IP}(?![\w.:@])`, "gi"), (m) => {
    if (!isIp(m[1]!)) return false;
    add(f, "ip", ipValue(m[1]!));
    hit();
  });

  // User agents: labelled, or a vendor's name.
  r.take(new RegExp(String.raw`\b(?:user[-_ ]?agents?|ua|agent)${SEP}${VALUE}`, "gi"), (m) => {
    const v = unquote(m[1]!);
    if (!/^["']/.test(m[1]!) && plainValue(m[1]!) === undefined) return false;
    add(f, "user_agent", canonicalVendor(v));
    hit();
  });
  r.take(
    new RegExp(
      String.raw`(?:\b(?:from|von|on|with|mit|using|via|by)\s+)?\b((?:${VENDOR_RE})[\w.-]*)(?:\s+(?:phones?|devices?|clients?|endpoints?|telefone?n?|geräte?n?))?(?![\w-])`,
      "giu",
    ),
    (m) => {
      add(f, "user_agent", canonicalVendor(m[1]!));
      hit();
    },
  );

  // Methods: by name (the four English words only in capitals or after "method"), and their nouns.
  r.take(new RegExp(String.raw`\bmethods?${SEP}([A-Za-z]+)`, "gi"), (m) => {
    const up = m[1]!.toUpperCase();
    if (!METHOD_SET.has(up)) return false;
    add(f, "method", up);
    hit();
  });
  for (const name of SIP_METHODS) {
    r.take(
      new RegExp(String.raw`(?<![\w@.-])(?:re-?)?${name}S?(?![\w@-])`, ENGLISH_WORDS.has(name) ? "g" : "gi"),
      () => {
        add(f, "method", name);
        hit();
      },
    );
  }
  for (const [re, method] of [
    [/\b(?:registrations?|registers|registrierungen|registrierung|anmeldungen)\b/gi, "REGISTER"],
    [/\b(?:hang-?ups?)\b/gi, "BYE"],
    [/\b(?:keep-?alives?|pings?)\b/gi, "OPTIONS"],
    [/\b(?:subscriptions?)\b/gi, "SUBSCRIBE"],
    [/\b(?:notifications?)\b/gi, "NOTIFY"],
  ] as const) {
    r.take(re, () => {
      add(f, "method", method);
      hit();
    });
  }

  // Users: "1001 to 2002", then "from 1001" / "to 2002" and their labels.
  const users = (key: "from_user" | "to_user", raw: string): boolean => {
    const vals = listOf(raw).map((x) => plainValue(x));
    if (vals.length === 0 || vals.some((x) => x === undefined)) return false;
    for (const v of vals) add(f, key, userPart(v!));
    hit();
    return true;
  };
  const ONE = `(?:${VALUE.slice(1, -1)})`;
  const LIST = String.raw`(${ONE}(?:\s*(?:,|\bor\b|\boder\b)\s*${ONE})*)`;
  r.take(
    new RegExp(
      String.raw`(?:\b(?:from|von)\s+)?(?<![^\s])${VALUE}\s+(?:to|->|→|an|nach|calling|ruft)\s+${VALUE}`,
      "giu",
    ),
    (m) => {
      const a = plainValue(m[1]!);
      const b = plainValue(m[2]!);
      if (a === undefined || b === undefined) return false;
      add(f, "from_user", userPart(a));
      add(f, "to_user", userPart(b));
      hit();
    },
  );
  for (const [label, key] of [
    [
      `(?:from|by|von)(?:[ _-]?(?:user|caller|number|extension|nummer|anrufer))?|caller|calling party|a-number|a-nummer|anrufer`,
      "from_user",
    ],
    [
      `(?:to|an|nach|towards)(?:[ _-]?(?:user|callee|number|extension|nummer))?|callee|called party|b-number|b-nummer|angerufener?|dialed|dialled|called|calling`,
      "to_user",
    ],
  ] as const) {
    r.take(new RegExp(String.raw`\b(?:${label})${SEP}${LIST}`, "giu"), (m) => users(key, m[1]!) || false);
  }

  // Bare codes a SIP engineer writes alone ("show 486 today").
  const COUNTED = "calls|messages|rows|results|entries|anrufe|nachrichten|seconds?|ms|s|sekunden";
  r.take(
    new RegExp(
      `(?<![\\w.:@/-])(?<!\\b(?:last|first|top|latest|newest|letzten|ersten|neuesten)\\s+)([1-6]\\d\\d)(?![\\w.:@/-])(?!\\s+(?:${COUNTED})\\b)`,
      "gi",
    ),
    (m) => {
      if (!KNOWN_CODES.has(Number(m[1]))) return false;
      add(f, "response_code", m[1]!);
      hit();
    },
  );

  // An outcome (busy, failed…) is of calls, the INVITE's final answer, unless a method is named ("failed registrations").
  if (outcome && f.method === undefined && f.cseq_method === undefined) add(f, "cseq_method", "INVITE");
  // "responses to INVITE" without a code: every response (the INVITE itself has that CSeq method too).
  r.take(/\b(?:responses?|replies|antworten)\b/gi, () => {
    if (f.cseq_method === undefined) return false;
  });
  if (f.cseq_method !== undefined && f.response_code === undefined) f.response_code = "1xx;2xx;3xx;4xx;5xx;6xx";
  // A method named together with response codes means the responses to it: responses carry no method.
  if (f.response_code !== undefined && f.method !== undefined) {
    add(f, "cseq_method", f.method);
    delete f.method;
  }

  const ignored = (r.work.match(/"[^"]+"|'[^']+'|[^\s,;.!?()"']+(?:\.[^\s,;.!?()"']+)*/g) ?? []).filter(
    (w) => !STOP_WORDS.has(w.toLowerCase()) && !/^(?:[-–—:=/]+|[a-z])$/i.test(w),
  );
  const timeDefault = f.time_range_label === undefined;
  if (timeDefault) Object.assign(f, { time_range_label: "last_hour", from_ms: nowMs - 3_600_000, to_ms: nowMs });
  return { filters: f, ignored, understood: matched || ignored.length === 0, timeDefault };
}

/** The filters alone (the range defaults to the last hour). */
export const parseWithRegex = (text: string, nowMs: number): NlFilters => understand(text, nowMs).filters;
