/**
 * Time conversions, the one module for them (server and dashboard bundle alike, so it imports
 * nothing). Times are UTC; epoch microseconds are JS numbers (exact up to 2^53 µs, year 2255).
 * The DuckDB value codec of the catalog (src/lake/catalog/values.ts) works on bigint µs with zone
 * suffixes and year bounds and stays there; everything else converts here.
 */

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** Epoch µs → "YYYY-MM-DD HH:MM:SS.ffffff" (UTC; the stats text form of timestamp columns). */
export function formatTimestampUs(us: number): string {
  const ms = Math.floor(us / 1000);
  const d = new Date(ms);
  const frac = us - ms * 1000 + (ms - Math.floor(ms / 1000) * 1000) * 1000;
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(frac, 6)}`;
}

/**
 * "YYYY-MM-DD HH:MM[:SS[.fffffffff]]" with " " or "T", optionally a zone (`Z`, `+02:00`, `-0500`;
 * none = UTC) → epoch µs (digits beyond µs dropped); null when absent or unparsable.
 */
export function parseTimestampUs(v: string | null | undefined): number | null {
  if (!v) return null;
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?\s*(z|[+-]\d{2}:?\d{2})?/i.exec(
    v.trim(),
  );
  if (!m) return null;
  const ms = Date.parse(`${m[1]}T${m[2]}:${m[3] ?? "00"}Z`);
  if (Number.isNaN(ms)) return null;
  const zone = /^([+-])(\d{2}):?(\d{2})$/.exec(m[5] ?? "");
  const offsetMs = zone ? (Number(zone[2]) * 60 + Number(zone[3])) * 60_000 * (zone[1] === "-" ? -1 : 1) : 0;
  return (ms - offsetMs) * 1000 + Number((m[4] ?? "").slice(0, 6).padEnd(6, "0"));
}

/** Epoch µs → ISO 8601 with all six fraction digits: "2026-11-26T01:02:03.456789Z". */
export function isoFromUs(us: number): string {
  const ms = Math.floor(us / 1000);
  return new Date(ms)
    .toISOString()
    .replace("Z", "")
    .replace(/\.(\d{3})$/, (_m, d: string) => `.${d}${String(us - ms * 1000).padStart(3, "0")}Z`);
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `2h30m` → 9 000 000 ms; `1.5h` is allowed; anything else (no unit, unknown unit, empty) → undefined. */
export function parseDuration(text: string): number | undefined {
  const s = text.trim().toLowerCase();
  if (s === "") return undefined;
  const part = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/y;
  let total = 0;
  let at = 0;
  while (at < s.length) {
    part.lastIndex = at;
    const m = part.exec(s);
    if (!m) return undefined;
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    at = part.lastIndex;
  }
  return Number.isFinite(total) ? total : undefined;
}
