import { fail, ok, parseDuration, type Result } from "../core/index.ts";

/**
 * Time specs of `svc search --from/--to` (docs/CLI.md "Time specs"): a duration relative to now
 * (`30m`, `1h`, `2h30m`, `1d`, `7d`), `now`, ISO 8601 (`…T…Z`), `YYYY-MM-DD HH:MM:SS`, `YYYY-MM-DD`
 * or epoch milliseconds. Times without a zone are UTC, as the coordinator reads them and as the
 * `timestamp` column is printed.
 */
export type TimeSpecReason = "TIME_SPEC_EMPTY" | "TIME_SPEC_INVALID";

/** UTC parts → epoch ms, refusing values Date.UTC would roll over (Feb 30, hour 25). */
function utc(y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0): number | undefined {
  const t = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const back = new Date(t);
  if (
    back.getUTCFullYear() !== y ||
    back.getUTCMonth() !== mo - 1 ||
    back.getUTCDate() !== d ||
    back.getUTCHours() !== h ||
    back.getUTCMinutes() !== mi
  )
    return undefined;
  return t;
}

/** Epoch ms of a time spec; `nowMs` anchors durations and `now`. */
export function parseTimeSpec(spec: string, nowMs: number): Result<number, TimeSpecReason> {
  const s = spec.trim();
  if (s === "") return fail("TIME_SPEC_EMPTY", "empty time");
  if (s.toLowerCase() === "now") return ok(nowMs);
  if (/^\d+$/.test(s)) return ok(Number(s));
  const dur = parseDuration(s);
  if (dur !== undefined) return ok(nowMs - dur);
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (day) {
    const t = utc(Number(day[1]), Number(day[2]), Number(day[3]));
    return t === undefined ? fail("TIME_SPEC_INVALID", `no such day "${s}"`) : ok(t);
  }
  const full = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/i.exec(
    s,
  );
  if (full) {
    const frac = full[7] ? Number(full[7].padEnd(3, "0").slice(0, 3)) : 0;
    const t = utc(
      Number(full[1]),
      Number(full[2]),
      Number(full[3]),
      Number(full[4]),
      Number(full[5]),
      Number(full[6] ?? 0),
      frac,
    );
    if (t === undefined || Number(full[6] ?? 0) > 59) return fail("TIME_SPEC_INVALID", `no such time "${s}"`);
    const zone = full[8];
    if (!zone || zone.toUpperCase() === "Z") return ok(t);
    const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
    const offsetMs = (Number(z[2]) * 60 + Number(z[3])) * 60_000 * (z[1] === "-" ? -1 : 1);
    return ok(t - offsetMs);
  }
  return fail(
    "TIME_SPEC_INVALID",
    `"${s}" is not a duration (30m, 2h30m, 7d), ISO 8601 time, YYYY-MM-DD [HH:MM:SS] or epoch milliseconds`,
  );
}
