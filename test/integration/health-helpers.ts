import type { HealthReport } from "../../src/api/index.ts";

/** GET /health of `base`: the HTTP status, the parsed report and the raw text (to check it names no path). */
export async function health(base: string): Promise<{ status: number; body: HealthReport; text: string }> {
  const r = await fetch(`${base}/health`);
  const text = await r.text();
  return { status: r.status, body: JSON.parse(text) as HealthReport, text };
}
