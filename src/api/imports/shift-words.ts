/**
 * An import's time shift in words (docs/ARCHITECTURE.md "PCAP import"): the two largest non-zero
 * units of years (365 d), days, hours, minutes and seconds, e.g. `shifted 21 y 10 d to now`
 * (`back to now` when the capture's clock was ahead).
 */
const UNITS: Array<[string, number]> = [
  ["y", 365 * 86_400],
  ["d", 86_400],
  ["h", 3600],
  ["min", 60],
  ["s", 1],
];

export function shiftWords(shiftUs: number): string {
  let left = Math.round(Math.abs(shiftUs) / 1e6);
  const parts: string[] = [];
  for (const [name, secs] of UNITS) {
    const n = Math.floor(left / secs);
    left -= n * secs;
    if (n > 0 && parts.length < 2) parts.push(`${n} ${name}`);
    else if (parts.length > 0) break;
  }
  const amount = parts.length ? parts.join(" ") : "less than 1 s";
  return shiftUs >= 0 ? `shifted ${amount} to now` : `shifted ${amount} back to now`;
}
