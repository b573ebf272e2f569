import { newId, nowMs, parseJsonColumn, type SettingsDb } from "./db.ts";
import { DEFINED_SETTINGS, normalizeSetting } from "./user-settings.ts";

/** A per-user advanced settings row (docs/API.md "Users and settings": `category`, `param`, `data`). */
export interface UserSetting {
  /** Row id; null for a default that is not stored. */
  id: string | null;
  category: string;
  param: string;
  data: Record<string, unknown>;
  /** True when nothing is stored and the row shows the built-in default. */
  isDefault: boolean;
  updatedAt: number | null;
}

interface Row {
  id: string;
  category: string;
  param: string;
  data: string;
  updated_at: number;
}

export class UserSettingsRepo {
  constructor(private readonly h: SettingsDb) {}

  /** Stored rows plus the defined settings' defaults for those not stored yet. */
  list(username: string): UserSetting[] {
    const rows = this.h.db
      .query(
        "SELECT id, category, param, data, updated_at FROM user_settings WHERE username = $username ORDER BY category, param",
      )
      .all({ username }) as Row[];
    const out: UserSetting[] = rows.map((r) => ({
      id: r.id,
      category: r.category,
      param: r.param,
      data: parseJsonColumn<Record<string, unknown>>(r.data, {}),
      isDefault: false,
      updatedAt: r.updated_at,
    }));
    for (const d of DEFINED_SETTINGS) {
      if (!out.some((s) => s.category === d.category && s.param === d.param)) {
        out.push({
          id: null,
          category: d.category,
          param: d.param,
          data: d.defaults(),
          isDefault: true,
          updatedAt: null,
        });
      }
    }
    return out.sort((a, b) => a.category.localeCompare(b.category) || a.param.localeCompare(b.param));
  }

  get(username: string, category: string, param: string): UserSetting | undefined {
    return this.list(username).find((s) => s.category === category && s.param === param);
  }

  /** Inserts or replaces one row (keeping its id); defined settings are normalised first (may throw VALIDATION). */
  upsert(username: string, category: string, param: string, data: Record<string, unknown>): UserSetting {
    const normalized = normalizeSetting(category, param, data);
    const now = nowMs();
    const row = this.h.db
      .query(
        `INSERT INTO user_settings (id, username, category, param, data, created_at, updated_at)
         VALUES ($id, $username, $category, $param, $data, $now, $now)
         ON CONFLICT (username, category, param) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at
         RETURNING id`,
      )
      .get({ id: newId(), username, category, param, data: JSON.stringify(normalized), now }) as { id: string };
    return { id: row.id, category, param, data: normalized, isDefault: false, updatedAt: now };
  }

  /** Deletes one param of a category, or the whole category; returns the number of rows removed. */
  delete(username: string, category: string, param?: string): number {
    const r =
      param === undefined
        ? this.h.db
            .query("DELETE FROM user_settings WHERE username = $username AND category = $category")
            .run({ username, category })
        : this.h.db
            .query("DELETE FROM user_settings WHERE username = $username AND category = $category AND param = $param")
            .run({ username, category, param });
    return r.changes;
  }
}
