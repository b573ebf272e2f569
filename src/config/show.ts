import type { TSchema } from "@sinclair/typebox";
import { redactUrl } from "../core/index.ts";
import { ConfigSchema, type Config } from "./schema.ts";

type Schemaish = TSchema & {
  properties?: Record<string, TSchema>;
  secret?: boolean;
  items?: TSchema;
  anyOf?: TSchema[];
};

/** The config with every `secret: true` value replaced by "***" when set (empty stays empty). */
export function maskSecrets(config: Config): Record<string, unknown> {
  const walk = (schema: Schemaish, value: unknown): unknown => {
    if (schema.secret) return typeof value === "string" && value !== "" ? "***" : value;
    // A URL's password (storage.lakehouse.catalog_path with catalog_type postgres) is masked wherever it appears.
    if (typeof value === "string" && /^[a-z][a-z0-9+.-]*:\/\/[^/?#@]*:[^/?#]*@/i.test(value)) return redactUrl(value);
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
