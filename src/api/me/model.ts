import { t } from "elysia";
import {
  SAVED_SEARCHES_MAX,
  SAVED_SEARCH_FIELD_RE,
  SAVED_SEARCH_FILTERS_MAX,
  SAVED_SEARCH_ID_RE,
  SAVED_SEARCH_LIST_MAX,
  SAVED_SEARCH_NAME_MAX,
  SAVED_SEARCH_RANGE_MAX_MIN,
  SAVED_SEARCH_VALUE_MAX,
} from "../../settings/index.ts";

/**
 * The shapes of the defined per-user settings (docs/API.md "Users and settings"; search.saved:
 * docs/DASHBOARD.md), published in the OpenAPI document for `PUT /me/settings/{category}`. The
 * settings module checks them (src/settings/user-settings.ts) and names the failing member.
 */
const value = t.String({ maxLength: SAVED_SEARCH_VALUE_MAX });

export const SavedSearchSchema = t.Object(
  {
    id: t.String({ pattern: SAVED_SEARCH_ID_RE.source, description: "chosen by the client, unique in the list" }),
    name: t.String({
      minLength: 1,
      maxLength: SAVED_SEARCH_NAME_MAX,
      description: "shown in the list; trimmed; unique per protocol (case-insensitive)",
    }),
    hepid: t.Integer({ minimum: 0, maximum: 65535, description: "HEP protocol of the search form (1 = SIP)" }),
    profile: t.String({
      minLength: 1,
      maxLength: 128,
      description: "mapping profile of the form (call, registration, default, …)",
    }),
    filters: t.Record(
      t.String({ pattern: SAVED_SEARCH_FIELD_RE.source }),
      t.Union([value, t.Array(value, { maxItems: SAVED_SEARCH_LIST_MAX }), t.Boolean()]),
      {
        maxProperties: SAVED_SEARCH_FILTERS_MAX,
        description:
          "form values by mapping field id, as the form holds them (text, several values, a flag); empty values are dropped",
      },
    ),
    range: t.Optional(
      t.Union([t.Null(), t.Object({ minutes: t.Integer({ minimum: 1, maximum: SAVED_SEARCH_RANGE_MAX_MIN }) })], {
        description: "relative time range restored with the search (Last N minutes); null keeps the dashboard's range",
      }),
    ),
  },
  { additionalProperties: true },
);

export const SavedSearchesSchema = t.Object(
  { items: t.Array(SavedSearchSchema, { maxItems: SAVED_SEARCHES_MAX }) },
  { additionalProperties: true, description: "search / saved: the user's saved searches" },
);

const offset = (lo: number, hi: number) => t.Integer({ minimum: lo, maximum: hi });
export const TransactionRangeSchema = t.Object(
  {
    from: t.Optional(offset(-86_400_000, 0)),
    to: t.Optional(offset(0, 86_400_000)),
    message_from: t.Optional(offset(-86_400_000, 0)),
    message_to: t.Optional(offset(0, 86_400_000)),
  },
  {
    additionalProperties: true,
    description:
      "transaction / range: ms offsets around the selected rows; a missing or out-of-range member keeps its default (±5 min)",
  },
);

export const ExportTransactionSchema = t.Object(
  {
    excludedCIDR: t.Optional(
      t.Array(
        t.Object(
          {
            ip: t.Optional(t.String()),
            alias: t.Optional(t.String({ maxLength: 256 })),
            disabled: t.Optional(t.Boolean()),
          },
          { additionalProperties: true },
        ),
      ),
    ),
  },
  {
    additionalProperties: true,
    description: "export / transaction: default exclusions of the export dialog (ip or CIDR, or alias)",
  },
);

/** What `data` of a setting is, as the OpenAPI document publishes it: the defined shapes, or another JSON object. */
export const SETTING_DATA_DOC = {
  type: "object",
  additionalProperties: true,
  anyOf: [
    SavedSearchesSchema,
    TransactionRangeSchema,
    ExportTransactionSchema,
    { type: "object", additionalProperties: true, description: "another category: stored as sent" },
  ],
};
