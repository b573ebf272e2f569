import type { ColumnDef, TableDef } from "../../core/index.ts";
import { hepTableName, PROTOCOLS } from "../../core/protocols.ts";

export { hepTableName };

/**
 * HEP tables (docs/API.md "Search results", "Protocol types"). SIP is routed by CSeq method
 * into call / registration / default; every other HEP protocol type N goes to hep_proto_<N>_default.
 * Files are sorted by (session_id, timestamp): a call's messages sit together, which compresses the
 * repeated headers and gives tight per-row-group min/max on session_id for Call-ID lookups.
 */
const BASE: ColumnDef[] = [
  { name: "uuid", type: "varchar", derived: "uuid" },
  { name: "timestamp", type: "timestamp" },
  { name: "date", type: "date", derived: "date_of:timestamp" },
  { name: "session_id", type: "varchar" },
  { name: "caller", type: "varchar" },
  { name: "callee", type: "varchar" },
  { name: "src_ip", type: "varchar" },
  { name: "dst_ip", type: "varchar" },
  { name: "src_port", type: "int32" },
  { name: "dst_port", type: "int32" },
  { name: "event", type: "varchar" },
  { name: "method", type: "varchar" },
  { name: "response_code", type: "int32" },
  { name: "cseq_method", type: "varchar" },
  { name: "proto_type", type: "int32" },
  { name: "protocol", type: "varchar" },
  { name: "node_id", type: "int64" },
  { name: "cid", type: "varchar" },
  { name: "payload", type: "varchar" },
  { name: "data_extra", type: "varchar" },
];

const REGISTRATION_EXTRA: ColumnDef[] = [
  { name: "aor", type: "varchar" },
  { name: "contact", type: "varchar" },
  { name: "expires", type: "int32" },
  { name: "user_agent", type: "varchar" },
];

export type SipTableKind = "call" | "registration" | "default";

/** HEP protocol types whose tables exist from the first start: the registry's, SIP aside. */
export const SEEDED_PROTOS: readonly number[] = PROTOCOLS.filter((p) => p.id !== 1 && p.id < 200).map((p) => p.id);

export function hepTableDef(proto: number, kind: SipTableKind = "default"): TableDef {
  return {
    schema: "main",
    name: hepTableName(proto, kind),
    columns: proto === 1 && kind === "registration" ? [...BASE, ...REGISTRATION_EXTRA] : [...BASE],
    timeColumn: "timestamp",
    partitionBy: "date",
    sortBy: ["session_id", "timestamp"],
    groupedBy: "session_id",
  };
}

/** Every HEP table defined at start. */
export function seededHepTables(): TableDef[] {
  return [
    hepTableDef(1, "call"),
    hepTableDef(1, "registration"),
    hepTableDef(1, "default"),
    ...SEEDED_PROTOS.map((p) => hepTableDef(p)),
  ];
}
