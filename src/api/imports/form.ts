import { AppError } from "../../core/index.ts";
import { hepTableName } from "../../core/protocols.ts";

/**
 * Form fields of `POST /imports/pcap` (docs/API.md "Import form fields"). Pure parsers: a value
 * outside the documented set is a 400 naming the field, never silently "false" or "default".
 */
export type SipTableChoice = "call" | "registration" | "default";

const invalid = (field: string, message: string) =>
  new AppError("VALIDATION", `${field}: ${message}`, { details: { fields: [field] } });

const TRUE = new Set(["true", "1", "on"]);
const FALSE = new Set(["false", "0", "off"]);

/** `override_to_current_time`: `true|false|1|0|on|off` (any case); absent or empty is false. */
export function parseBoolField(v: unknown, field: string): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === "boolean") return v;
  const s = String(v).trim().toLowerCase();
  if (s === "") return false;
  if (TRUE.has(s)) return true;
  if (FALSE.has(s)) return false;
  throw invalid(field, "expected one of true, false, 1, 0, on, off");
}

/**
 * Every spelling of a SIP table: the logical name, the lake table name (`hep_proto_1_call`) and
 * its short form (`1_call`), plus `reg` / `register` for registration (the spec names these).
 */
const TABLE_ALIASES: ReadonlyMap<string, SipTableChoice> = new Map(
  (["call", "registration", "default"] as const).flatMap((k) => [
    [k, k],
    [`1_${k}`, k],
    [hepTableName(1, k), k],
  ]),
)
  .set("reg", "registration")
  .set("register", "registration")
  .set("1_reg", "registration")
  .set("hep_proto_1_reg", "registration");

/** The spellings the form fields take, lower case (published in the OpenAPI document). */
export const BOOL_FIELD_VALUES: readonly string[] = ["", ...TRUE, ...FALSE];
export const TABLE_FIELD_VALUES: readonly string[] = ["", ...TABLE_ALIASES.keys()];

/** `force_sip_table` (or its alias `force_table`): undefined when absent or empty. */
export function parseForceTable(forceSipTable: unknown, forceTable: unknown): SipTableChoice | undefined {
  const one = (v: unknown, field: string): SipTableChoice | undefined => {
    if (v === undefined || v === null) return undefined;
    const s = String(v).trim().toLowerCase();
    if (s === "") return undefined;
    const k = TABLE_ALIASES.get(s);
    if (!k)
      throw invalid(
        field,
        "expected call, registration or default (also reg, register, hep_proto_1_call, 1_call, ...)",
      );
    return k;
  };
  const a = one(forceSipTable, "force_sip_table");
  const b = one(forceTable, "force_table");
  if (a && b && a !== b)
    throw invalid("force_table", `conflicts with force_sip_table (${a} vs ${b}); send one of them`);
  return a ?? b;
}
