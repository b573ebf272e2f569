/**
 * Statistics and control routes of the control API (docs/LOADGEN.md "Control API"):
 * `GET /api/v1/stats` and `POST /api/v1/control`.
 */
import { AppError } from "../core/index.ts";
import { json, readJson, requireMethod, type Route } from "./control-http.ts";

/** Validates a control body; returns what to apply or a message for a 400. */
export function parseControl(body: unknown): { rate?: number; pause?: boolean } | string {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return 'the body must be a JSON object such as {"rate": 50} or {"pause": true}';
  const out: { rate?: number; pause?: boolean } = {};
  for (const [k, v] of Object.entries(body)) {
    if (k === "rate") {
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0) return "rate must be a number ≥ 0 (calls per rate period)";
      out.rate = v;
    } else if (k === "pause") {
      if (typeof v !== "boolean") return "pause must be true or false";
      out.pause = v;
    } else return `unknown control key "${k}" (rate, pause)`;
  }
  if (out.rate === undefined && out.pause === undefined) return "nothing to change: give rate and/or pause";
  return out;
}

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
      for (const e of engines) {
        if (change.rate !== undefined) e.setRate(change.rate);
        if (change.pause !== undefined) e.setPaused(change.pause);
      }
      const s = engines[0]!.snapshot();
      return json(200, { rate: s.rate, paused: s.paused, engines: engines.length });
    },
  },
];
