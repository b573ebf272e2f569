import type { TSchema } from "@sinclair/typebox";
import { ConfigSchema } from "./schema.ts";

type Node = TSchema & { properties?: Record<string, TSchema>; default?: unknown };

/** The schema's default of a key path (`storage.lakehouse.tuning.threads`); undefined when the path names no key. */
export function defaultOf(path: string): unknown {
  let s: Node | undefined = ConfigSchema as Node;
  for (const part of path.split(".")) s = s?.properties?.[part] as Node | undefined;
  return s?.default;
}

/** The value at a key path of a loaded configuration. */
export function valueAt(config: unknown, path: string): unknown {
  let v: unknown = config;
  for (const part of path.split("."))
    v = v !== null && typeof v === "object" ? (v as Record<string, unknown>)[part] : undefined;
  return v;
}

/**
 * Was the key set to something other than its default (file or environment)? A key set to its
 * default value cannot be told apart, and behaves as the default anyway.
 */
export function isSet(config: unknown, path: string): boolean {
  return JSON.stringify(valueAt(config, path)) !== JSON.stringify(defaultOf(path));
}
