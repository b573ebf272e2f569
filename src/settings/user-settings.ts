import { invalidField } from "./db.ts";
import { parseCidr } from "../core/index.ts";
import { validateSavedSearches } from "./saved-searches.ts";

/**
 * The two advanced settings docs/API.md "Users and settings" defines, and the dashboard's saved
 * searches (docs/DASHBOARD.md), normalised here so every writer stores the same shape. Other
 * categories are stored as sent (a JSON object).
 */
export const DAY_MS = 86_400_000;
export const DEFAULT_OFFSET_MS = 300_000;

export interface TransactionRange {
  from: number;
  to: number;
  message_from: number;
  message_to: number;
}

export const DEFAULT_TRANSACTION_RANGE: Readonly<TransactionRange> = Object.freeze({
  from: -DEFAULT_OFFSET_MS,
  to: DEFAULT_OFFSET_MS,
  message_from: -DEFAULT_OFFSET_MS,
  message_to: DEFAULT_OFFSET_MS,
});

const inRange = (v: unknown, lo: number, hi: number): v is number =>
  typeof v === "number" && Number.isInteger(v) && v >= lo && v <= hi;

/**
 * transaction.range: `from`/`message_from` in [-86400000, 0], `to`/`message_to` in [0, 86400000];
 * "a missing or out-of-range member keeps its default" — so this never rejects, it falls back.
 */
export function normalizeTransactionRange(input: unknown): TransactionRange {
  const o = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
  const d = DEFAULT_TRANSACTION_RANGE;
  return {
    from: inRange(o.from, -DAY_MS, 0) ? o.from : d.from,
    to: inRange(o.to, 0, DAY_MS) ? o.to : d.to,
    message_from: inRange(o.message_from, -DAY_MS, 0) ? o.message_from : d.message_from,
    message_to: inRange(o.message_to, 0, DAY_MS) ? o.message_to : d.message_to,
  };
}

export interface ExcludedAddress {
  ip?: string;
  alias?: string;
  disabled: boolean;
}

export interface ExportTransactionSettings {
  excludedCIDR: ExcludedAddress[];
}

const fail = (field: string, why: string): never => {
  throw invalidField(field, why);
};

/** export.transaction: `excludedCIDR` entries carry `ip` (address or CIDR) or `alias`, and `disabled`. */
export function validateExportTransaction(input: unknown): ExportTransactionSettings {
  const o = (
    typeof input === "object" && input !== null && !Array.isArray(input) ? input : fail("data", "must be an object")
  ) as Record<string, unknown>;
  const list = o.excludedCIDR ?? [];
  if (!Array.isArray(list)) return fail("data.excludedCIDR", "must be an array");
  const out: ExcludedAddress[] = list.map((item: unknown, i) => {
    const at = `data.excludedCIDR[${i}]`;
    if (typeof item !== "object" || item === null || Array.isArray(item)) return fail(at, "must be an object");
    const e = item as Record<string, unknown>;
    const entry: ExcludedAddress = { disabled: false };
    if (e.disabled !== undefined)
      entry.disabled = typeof e.disabled === "boolean" ? e.disabled : fail(`${at}.disabled`, "must be a boolean");
    if (e.ip !== undefined && e.ip !== "") {
      if (typeof e.ip !== "string" || !parseCidr(e.ip)) return fail(`${at}.ip`, "must be an IPv4/IPv6 address or CIDR");
      entry.ip = e.ip;
    }
    if (e.alias !== undefined && e.alias !== "") {
      if (typeof e.alias !== "string" || e.alias.length > 256)
        return fail(`${at}.alias`, "must be a string of at most 256 characters");
      entry.alias = e.alias;
    }
    if (entry.ip === undefined && entry.alias === undefined) return fail(at, "needs ip or alias");
    return entry;
  });
  return { excludedCIDR: out };
}

/** The settings with a defined shape and their defaults, listed even before a user saved them. */
export const DEFINED_SETTINGS: ReadonlyArray<{
  category: string;
  param: string;
  defaults: () => Record<string, unknown>;
}> = [
  { category: "transaction", param: "range", defaults: () => ({ ...DEFAULT_TRANSACTION_RANGE }) },
  { category: "export", param: "transaction", defaults: () => ({ excludedCIDR: [] }) },
  { category: "search", param: "saved", defaults: () => ({ items: [] }) },
];

/** Normalises `data` for a defined setting; other (category, param) pairs pass through. */
export function normalizeSetting(
  category: string,
  param: string,
  data: Record<string, unknown>,
): Record<string, unknown> {
  if (category === "transaction" && param === "range") return { ...normalizeTransactionRange(data) };
  if (category === "export" && param === "transaction") return { ...validateExportTransaction(data) };
  if (category === "search" && param === "saved") return { ...validateSavedSearches(data) };
  return data;
}
