/**
 * Units and identifiers of the QoS tab (docs/ADMIN.md, "QoS"): SSRC as Wireshark shows it
 * (0x + 8 hex digits), RTCP fraction lost as a percentage, values with their unit. Pure; see
 * qos-format.test.ts.
 */

/** A metric's unit as charts and cards print it. */
export const QOS_UNITS = { jitter: "ms", loss: "%", mos: "MOS" } as const;

/**
 * `0x0000a029`: an SSRC (RFC 3550 §5.1, 32 bits) from the decimal the reports carry. Agents that
 * print it as a signed 32-bit integer are folded to the same unsigned value; a value that is not
 * a 32-bit integer is shown as given.
 */
export function ssrcHex(ssrc: string | number | null | undefined): string {
  if (ssrc === null || ssrc === undefined || ssrc === "") return "—";
  const text = String(ssrc).trim();
  if (/^0x[0-9a-f]{1,8}$/i.test(text)) return `0x${text.slice(2).toLowerCase().padStart(8, "0")}`;
  if (!/^-?\d+$/.test(text)) return text;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < -0x80000000 || n > 0xffffffff) return text;
  return `0x${(n >>> 0).toString(16).padStart(8, "0")}`;
}

/** RTCP fraction lost is a fixed-point fraction of 256 (RFC 3550 §6.4.1) → percent. */
export const lossPercent = (fractionLost: number): number => (fractionLost * 100) / 256;

/** A number with sensible digits for its size: 0.375, 1.50, 12.5, 240. */
export function metricNumber(v: number): string {
  const a = Math.abs(v);
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  if (a >= 1 || a === 0) return v.toFixed(2);
  return v.toFixed(3);
}

/** `1.50 ms`, `2.0 %`, `4.12` (MOS is a score, printed bare); `—` for no value. */
export function formatMetric(v: number | null | undefined, unit: string): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "—";
  if (unit === "%") return `${v.toFixed(1)} %`;
  if (unit === "MOS") return v.toFixed(2);
  return `${metricNumber(v)} ${unit}`;
}

/** ITU-T G.107 user satisfaction bands, coarsely: ≥ 4.0 good, ≥ 3.6 fair, below poor. */
export function mosGrade(mos: number | null): "good" | "fair" | "poor" | "" {
  if (mos === null) return "";
  return mos >= 4 ? "good" : mos >= 3.6 ? "fair" : "poor";
}

/** The smallest 1, 2, 2.5 or 5 × 10^k at or above `v` (> 0): a chart's top that reads as a round number. */
export function niceCeil(v: number): number {
  if (!(v > 0) || !Number.isFinite(v)) return 1;
  const exp = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * exp >= v * (1 - 1e-12)) return m * exp;
  return 10 * exp;
}

/** An axis tick: at most three significant digits, no trailing zeros (0, 2.5, 30, 0.125). */
export const tickText = (v: number): string => String(Number(v.toPrecision(3)));
