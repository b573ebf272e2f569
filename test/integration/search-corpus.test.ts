/**
 * Required: "Messages replayed from the SIP pcaps in the corpus …: search by each
 * field finds exactly tshark's ground truth". Each corpus pcap is imported (POST /imports/pcap,
 * original timestamps) and, for every distinct value of every field tshark reports, the search
 * API must return exactly the frames tshark lists with that value (substring fields: a superset
 * whose every row contains the value). The corpus is third-party data outside the repo: without
 * it the test skips with one line.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../harness.ts";
import { epochTextToUs, startWithApi, type Api } from "./export-helpers.ts";
import { corpusPath } from "../corpus.ts";

const CORPUS = process.env.SVC_PCAP_CORPUS ?? corpusPath("pcaps");
const TABLES = ["call", "registration", "default"] as const;

interface Frame {
  us: number;
  src: string;
  dst: string;
  sport: string;
  dport: string;
  method: string;
  status: string;
  callId: string;
  from: string;
  to: string;
  ruri: string;
  ua: string;
}

function groundTruth(tsv: string): Frame[] {
  const [head, ...lines] = readFileSync(tsv, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
  const cols = head!.split("\t");
  const at = (row: string[], name: string) => row[cols.indexOf(name)] ?? "";
  return lines.map((l) => {
    const r = l.split("\t");
    return {
      us: epochTextToUs(at(r, "frame.time_epoch")),
      src: at(r, "ip.src") || at(r, "ipv6.src"),
      dst: at(r, "ip.dst") || at(r, "ipv6.dst"),
      sport: at(r, "udp.srcport") || at(r, "tcp.srcport") || at(r, "sctp.srcport"),
      dport: at(r, "udp.dstport") || at(r, "tcp.dstport") || at(r, "sctp.dstport"),
      method: at(r, "sip.Method"),
      status: at(r, "sip.Status-Code"),
      callId: at(r, "sip.Call-ID"),
      from: at(r, "sip.from.user"),
      to: at(r, "sip.to.user"),
      ruri: at(r, "sip.r-uri.user"),
      ua: at(r, "sip.User-Agent"),
    };
  });
}

const frameKey = (f: Frame) => `${f.us}|${f.callId}|${f.method || f.status}`;
const rowKey = (r: Record<string, unknown>) => `${r.timestamp_us}|${r.session_id}|${r.event}`;

async function searchAll(
  api: Api,
  filter: Record<string, unknown>,
  fromMs: number,
  toMs: number,
): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  for (const t of TABLES) {
    const r = await api.call("POST", "/transactions/search", {
      filter: { proto_type: 1, event_type: t, ...filter },
      param: { limit: 10_000 },
      timestamp: { from: fromMs, to: toMs },
    });
    expect(r.status).toBe(200);
    out.push(...r.json!.data!.items!);
  }
  return out;
}

const pcaps = existsSync(CORPUS)
  ? readdirSync(CORPUS).filter((f) => f.endsWith(".pcap") && existsSync(join(CORPUS, f.replace(/\.pcap$/, ".sip.tsv"))))
  : [];
if (pcaps.length === 0)
  console.warn(`skip: search-corpus needs the public SIP corpus at ${CORPUS} (not part of the repo)`);

describe("search over imported corpus pcaps matches tshark field by field", () => {
  for (const name of pcaps) {
    test(name, async () => {
      await using dir = tempDir();
      await using s = await startWithApi(dir.path, { storage: { lakehouse: { retention: { days: 0 } } } });
      const { api } = s;
      const form = new FormData();
      form.append("file", new File([readFileSync(join(CORPUS, name))], name));
      const imp = await api.call("POST", "/imports/pcap", form);
      expect(imp.status).toBe(201);
      const truth = groundTruth(join(CORPUS, name.replace(/\.pcap$/, ".sip.tsv")));
      const fromMs = Math.floor(Math.min(...truth.map((f) => f.us)) / 1000) - 1000;
      const toMs = Math.ceil(Math.max(...truth.map((f) => f.us)) / 1000) + 1000;
      const checks: Array<[string, Exclude<keyof Frame, "us">, "exact" | "contains"]> = [
        ["call_id", "callId", "exact"],
        ["from_user", "from", "exact"],
        ["to_user", "to", "exact"],
        ["method", "method", "exact"],
        ["response_code", "status", "exact"],
        ["src_ip", "src", "exact"],
        ["dst_ip", "dst", "exact"],
        ["src_port", "sport", "exact"],
        ["dst_port", "dport", "exact"],
        ["ruri_user", "ruri", "contains"],
        ["user_agent", "ua", "contains"],
      ];
      let compared = 0;
      for (const [field, key, mode] of checks) {
        const values = [...new Set(truth.map((f) => f[key]).filter((v) => v !== ""))];
        for (const value of values) {
          // Values with ';' or '%' would be OR-lists / wildcards in the API: not literal searches.
          if (value.includes(";") || value.includes("%")) continue;
          const rows = await searchAll(api, { [field]: value }, fromMs, toMs);
          const expected = truth
            .filter((f) => (mode === "exact" ? f[key] === value : f[key].includes(value)))
            .map(frameKey)
            .sort();
          const got = rows.map(rowKey).sort();
          if (mode === "exact") expect({ field, value, got }).toEqual({ field, value, got: expected });
          else
            for (const k of expected)
              expect({ field, value, has: got.includes(k) }).toEqual({ field, value, has: true });
          compared++;
        }
      }
      expect(compared).toBeGreaterThan(0);
    });
  }
});
