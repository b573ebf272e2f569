import { t } from "elysia";
import { AppError } from "../../core/index.ts";
import type { Lake } from "../../lake/index.ts";
import type { SettingsStore } from "../../settings/index.ts";
import type { Gathered, OverNodes } from "./fan-out.ts";
import { noLakeError } from "./no-lake.ts";
import type { SearchService } from "./service.ts";

/**
 * One message by uuid (`GET /messages/{id}` and its decoded form): this process's lake, and with
 * coordinator.nodes every node too (docs/ARCHITECTURE.md "Reads over several nodes"). A uuid is
 * one row in one lake; of nodes sharing a lake the first reads files and buffer, the others their
 * buffer only. Not found on the nodes that answered while another did not: 404 naming those.
 */
export const NodeMessageBody = t.Object({
  uuid: t.String({ pattern: "^[0-9a-fA-F-]{36}$" }),
  buffer_only: t.Optional(
    t.Boolean({ description: "only rows not yet in data files: another node of the same lake answers for the files" }),
  ),
});

const UUID = /^[0-9a-fA-F-]{36}$/;

/** The message as a search row of this lake, or undefined: files are pruned by the uuid column's statistics (UUIDv7 sorts by time). */
export async function lakeMessage(
  lake: Lake,
  search: SearchService,
  id: string,
  bufferOnly = false,
): Promise<Record<string, unknown> | undefined> {
  if (!UUID.test(id)) return undefined;
  const uuid = id.toLowerCase();
  for (const def of lake.tables()) {
    if (!def.columns.some((c) => c.name === "uuid")) continue;
    const key = `${def.schema}.${def.name}`;
    const scan = await lake.scanSql(key, {
      prune: { column: "uuid", min: uuid, max: uuid },
      ...(bufferOnly ? { files: false as const, buffer: true } : {}),
    });
    const cols = def.columns
      .map((c) => (c.type === "timestamp" ? `epoch_us("${c.name}") AS "${c.name}"` : `"${c.name}"`))
      .join(", ");
    const r = await lake.query(`SELECT ${cols} FROM (${scan}) t WHERE uuid = $1`, [uuid]);
    if (r.rows[0]) return search.toItem(r.rows[0], 0, def, key);
  }
  return undefined;
}

/** The message, from this lake or the first node holding it; meta.nodes when it asked nodes. */
export async function findMessage(
  deps: { lake: Lake | undefined; search: SearchService; settings: SettingsStore; over?: OverNodes | undefined },
  id: string,
): Promise<{ item: Record<string, unknown>; gathered?: Gathered<{ item: Record<string, unknown> | null }> }> {
  if (!UUID.test(id)) throw new AppError("NOT_FOUND", `no message ${id}`);
  const lake = deps.lake;
  if (!deps.over) {
    if (!lake) throw noLakeError("a message without coordinator.nodes");
    const item = await lakeMessage(lake, deps.search, id);
    if (!item) throw new AppError("NOT_FOUND", `no message ${id}`);
    return { item };
  }
  const g = await deps.over.gather<{ item: Record<string, unknown> | null }>({
    read: "message",
    path: "/api/v1/messages/by-uuid",
    body: (bufferOnly) => ({ uuid: id, ...(bufferOnly ? { buffer_only: true } : {}) }),
    ...(lake ? { local: async () => ({ item: (await lakeMessage(lake, deps.search, id)) ?? null }) } : {}),
    rows: (v) => (v.item ? 1 : 0),
  });
  const found = g.answers.find((a) => a.value.item);
  if (!found) {
    const missing = g.nodes
      .filter((n) => n.status === "failed" || n.status === "timeout")
      .map((n) => `${n.name} ${n.status === "timeout" ? "timed out" : "failed"}`);
    throw new AppError(
      "NOT_FOUND",
      `no message ${id}${missing.length ? ` on the nodes that answered (${missing.join("; ")})` : ""}`,
      missing.length ? { details: { nodes: g.nodes } } : undefined,
    );
  }
  const item: Record<string, unknown> = { ...found.value.item!, node: found.name };
  // A node's row names its addresses by this coordinator's aliases, as the list search's rows (src/cluster/fan-out.ts).
  if (found.name !== "local") {
    const int = (v: unknown) => (v === null || v === undefined ? null : Number(v));
    const aliases = deps.settings.aliases;
    if (typeof item.src_ip === "string")
      item.src_alias = aliases.resolveAlias(item.src_ip, int(item.src_port), int(item.capture_id)) ?? null;
    if (typeof item.dst_ip === "string")
      item.dst_alias = aliases.resolveAlias(item.dst_ip, int(item.dst_port), int(item.capture_id)) ?? null;
  }
  return { item, gathered: g };
}
