import type { TSchema } from "@sinclair/typebox";
import { ConfigSchema, type Config } from "./schema.ts";

type Schemaish = TSchema & { properties?: Record<string, TSchema>; secret?: boolean; items?: TSchema; anyOf?: TSchema[] };

/** The config with every `secret: true` value replaced by "***" when set (empty stays empty). */
export function maskSecrets(config: Config): Record<string, unknown> {
  const walk = (schema: Schemaish, value: unknown): unknown => {
    if (schema.secret) return typeof value === "string" && value !== "" ? "***" : value;
    // Lists of objects (coordinator.nodes) carry secrets too: each member by its object schema.
    if (schema.items && Array.isArray(value)) return value.map((v) => walk(schema.items as Schemaish, v));
    if (schema.anyOf && value && typeof value === "object") {
      const member = schema.anyOf.find((m) => (m as Schemaish).properties) as Schemaish | undefined;
      return member ? walk(member, value) : value;
    }
    if (schema.properties && value && typeof value === "object" && !Array.isArray(value)) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        const child = schema.properties[k] as Schemaish | undefined;
        out[k] = child ? walk(child, v) : v;
      }
      return out;
    }
    return value;
  };
  return walk(ConfigSchema as Schemaish, config) as Record<string, unknown>;
}

/** Every leaf key with its default and description, for `svc show-config --describe` and docs. */
export function describeConfig(): Array<{ key: string; default: unknown; description: string; secret: boolean }> {
  const rows: Array<{ key: string; default: unknown; description: string; secret: boolean }> = [];
  const walk = (schema: Schemaish, path: string) => {
    if (schema.properties) {
      for (const [k, v] of Object.entries(schema.properties)) walk(v as Schemaish, path ? `${path}.${k}` : k);
      return;
    }
    rows.push({
      key: path,
      default: (schema as { default?: unknown }).default,
      description: String((schema as { description?: string }).description ?? ""),
      secret: Boolean(schema.secret),
    });
  };
  walk(ConfigSchema as Schemaish, "");
  return rows;
}
