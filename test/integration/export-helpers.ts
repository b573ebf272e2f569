/**
 * Shared by the export and import integration tests: the real appliance with a known admin
 * password, a logged-in API client, and tshark's field view of a capture file (the independent
 * judge of "opens with no malformed frames, same messages and times").
 */
import { sha256Hex } from "../../src/auth/index.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";

export const ADMIN_PASSWORD = "export-import-test-password";

export interface ApiResult {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
  text: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  json:
    | { data?: Record<string, unknown> & { items?: Array<Record<string, unknown>> }; error?: string; message?: string }
    | undefined;
}

export interface Api {
  base: string;
  token: string;
  /** JSON (or FormData) request with the logged-in user's token (`token: null` sends none). */
  call(method: string, path: string, body?: unknown, opts?: { token?: string | null }): Promise<ApiResult>;
  login(username: string, password: string): Promise<string>;
}

async function result(r: Response): Promise<ApiResult> {
  const bytes = new Uint8Array(await r.arrayBuffer());
  const text = new TextDecoder().decode(bytes);
  let json: ApiResult["json"];
  try {
    json = JSON.parse(text) as ApiResult["json"];
  } catch {
    json = undefined;
  }
  return { status: r.status, headers: r.headers, bytes, text, json };
}

export interface ApiAppliance extends AsyncDisposable {
  a: TestAppliance;
  api: Api;
}

/** `await using s = await startWithApi(dir)`: the appliance (stopped at scope exit) and an admin client. */
export async function startWithApi(dir: string, overrides: Record<string, unknown> = {}): Promise<ApiAppliance> {
  const coordinator = {
    auth: { admin_password_hash: sha256Hex(ADMIN_PASSWORD) },
    ...((overrides.coordinator as Record<string, unknown>) ?? {}),
  };
  const a = await startTestAppliance(dir, { ...overrides, coordinator });
  const base = `${a.app.coordinatorUrl}/api/v4`;
  const login = async (username: string, password: string) => {
    const r = await fetch(`${base}/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username, password }),
    });
    if (r.status !== 201) throw new Error(`login ${username}: ${r.status} ${await r.text()}`);
    return ((await r.json()) as { token: string }).token;
  };
  let token: string;
  try {
    token = await login("admin", ADMIN_PASSWORD);
  } catch (e) {
    await a[Symbol.asyncDispose]();
    throw e;
  }
  const call: Api["call"] = async (method, path, body, opts = {}) => {
    const t = opts.token === undefined ? token : opts.token;
    const headers: Record<string, string> = t === null ? {} : { authorization: `Bearer ${t}` };
    let payload: BodyInit | undefined;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      headers["content-type"] = "application/json";
      payload = JSON.stringify(body);
    }
    return await result(
      await fetch(`${base}${path}`, { method, headers, ...(payload === undefined ? {} : { body: payload }) }),
    );
  };
  return { a, api: { base, token, call, login }, [Symbol.asyncDispose]: () => a[Symbol.asyncDispose]() };
}

/** One SIP frame as tshark dissects it. */
export interface TsharkSip {
  timeUs: number;
  src: string;
  srcPort: number;
  callId: string;
  method: string;
  status: string;
  /** Expert info text (empty for a clean frame); "Malformed" would show here. */
  expert: string;
}

/** "1120469572.844249000" → µs, exact (no floating point). */
export function epochTextToUs(epoch: string): number {
  const [sec = "0", frac = ""] = epoch.split(".");
  return Number(sec) * 1_000_000 + Number(frac.padEnd(6, "0").slice(0, 6));
}

/** `tshark -r file -T fields` with the fields the acceptance criterion names; one row per frame. */
export function tsharkSip(path: string): TsharkSip[] {
  const fields = [
    "frame.time_epoch",
    "ip.src",
    "ipv6.src",
    "udp.srcport",
    "sip.Call-ID",
    "sip.Method",
    "sip.Status-Code",
    "_ws.expert.message",
    "_ws.malformed",
  ];
  const r = Bun.spawnSync(["tshark", "-n", "-r", path, "-T", "fields", ...fields.flatMap((f) => ["-e", f])], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`tshark -r ${path}: exit ${r.exitCode}: ${r.stderr.toString()}`);
  return r.stdout
    .toString()
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((line) => {
      const [
        t = "",
        ip4 = "",
        ip6 = "",
        port = "",
        callId = "",
        method = "",
        status = "",
        expert = "",
        malformed = "",
      ] = line.split("\t");
      return {
        timeUs: epochTextToUs(t),
        src: ip4 || ip6,
        srcPort: Number(port),
        callId,
        method,
        status,
        expert: `${expert}${malformed ? ` malformed:${malformed}` : ""}`,
      };
    });
}

/** Method for a request, status code for a response: the `event` column of the SIP tables. */
export const eventOf = (s: { method: string; status: string }): string => s.method || s.status;
