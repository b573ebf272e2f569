/**
 * Statistics and control routes of the control API (docs/LOADGEN.md "Control API"):
 * `GET /api/v1/stats`, `POST /api/v1/control` (control-change.ts) and `GET /api/v1/listeners`.
 */
import { AppError } from "../core/index.ts";
import { applyControl, parseControl } from "./control-change.ts";
import { json, readJson, requireMethod, type Route } from "./control-http.ts";

export const statsRoutes: Route[] = [
  {
    pattern: /^\/api\/v1\/stats$/,
    label: "GET /api/v1/stats",
    handle(req, { engines }) {
      requireMethod(req, "GET");
      if (engines.length === 1) return json(200, engines[0]!.snapshot());
      return json(200, { multi: true, engines: engines.map((e) => ({ id: e.id, stats: e.snapshot() })) });
    },
  },
  {
    pattern: /^\/api\/v1\/control$/,
    label: "POST /api/v1/control",
    async handle(req, { engines }) {
      requireMethod(req, "POST");
      const change = parseControl(await readJson(req));
      if (typeof change === "string") throw new AppError("BAD_REQUEST", change);
      return json(200, await applyControl(engines, change));
    },
  },
  {
    pattern: /^\/api\/v1\/listeners$/,
    label: "GET /api/v1/listeners",
    handle(req, { engines }) {
      requireMethod(req, "GET");
      const primary = engines[0]!;
      return json(200, { id: primary.id, listeners: primary.listeners.states() });
    },
  },
];
