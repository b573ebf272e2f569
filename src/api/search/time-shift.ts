/**
 * The call view's note on shifted times (docs/CALL-VIEW.md "Shifted times"): when a message of the
 * call came from an agent whose clock was outside the accepted window, ingest stored it shifted by
 * one offset per source with data_extra.time_shifted_us (docs/ARCHITECTURE.md "Agent clocks
 * outside the accepted window"); the messages API says so once for the call.
 */
export interface TimeShiftNote {
  /** Messages of the call whose time was shifted. */
  messages: number;
  /** The distinct offsets (µs, arrival time - agent time), largest magnitude first. */
  shifts_us: number[];
  /** One line for the call view. */
  note: string;
}

const UNITS: Array<[string, number]> = [
  ["y", 365 * 86_400_000_000],
  ["d", 86_400_000_000],
  ["h", 3_600_000_000],
  ["min", 60_000_000],
  ["s", 1_000_000],
  ["ms", 1000],
];

/** |us| as its two largest non-zero units, e.g. "14 y 3 d", "2 h 5 min", "1 s 250 ms" (365-day years). */
export function formatShift(us: number): string {
  let left = Math.abs(Math.round(us));
  const parts: string[] = [];
  for (const [name, size] of UNITS) {
    if (parts.length === 2) break;
    const n = Math.floor(left / size);
    if (n > 0 || parts.length > 0) {
      if (n > 0) parts.push(`${n} ${name}`);
      left -= n * size;
      if (parts.length > 0 && n === 0) break;
    }
  }
  return parts.length > 0 ? parts.join(" ") : `${left} µs`;
}

/** The note for a call's items (rows as the messages API gives them), or null when no time was shifted. */
export function timeShiftNote(items: ReadonlyArray<Record<string, unknown>>): TimeShiftNote | null {
  let messages = 0;
  const shifts = new Set<number>();
  for (const it of items) {
    const extra = it.data_extra;
    if (!extra || typeof extra !== "object") continue;
    const shift = (extra as Record<string, unknown>).time_shifted_us;
    if (typeof shift !== "number") continue;
    messages++;
    shifts.add(shift);
  }
  if (messages === 0) return null;
  const shifts_us = [...shifts].sort((a, b) => Math.abs(b) - Math.abs(a));
  const main = shifts_us[0]!;
  // A positive offset moved the times later (an old clock), a negative one earlier (a clock ahead).
  const by = `${main >= 0 ? "" : "back "}by ${formatShift(main)}${shifts_us.length > 1 ? ` (${shifts_us.length} different offsets)` : ""}`;
  const which = messages === items.length ? "Times" : `Times of ${messages} of ${items.length} messages`;
  return {
    messages,
    shifts_us,
    note: `${which} shifted ${by}: the agent's clock was outside the accepted window; spacing kept`,
  };
}
