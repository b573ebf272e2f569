import type { Config } from "../config/index.ts";
import { filtersFromModel, SIP_METHODS, type NlFilters } from "./filters.ts";

/**
 * The language-model bridge (docs/MCP.md "Language model"): one
 * POST to `<base_url>/chat/completions` of an OpenAI-compatible provider with `response_format`
 * JSON object. Only the filter envelope is taken from the answer; it never becomes SQL.
 */
export type LlmConfig = Config["mcp"]["llm"];

export type LlmFailure =
  | "disabled"
  | "busy"
  | "timeout"
  | "unreachable"
  | "unauthorized"
  | "not_found"
  | "http_error"
  | "decode";

/** Model calls in flight at most per process: each one costs the provider's money and up to timeout_sec. */
export const MAX_LLM_IN_FLIGHT = 4;

export class LlmError extends Error {
  constructor(
    readonly kind: LlmFailure,
    message: string,
  ) {
    super(message);
  }
}

export interface LlmAnswer {
  filters: NlFilters;
  model: string;
  latencyMs: number;
}

export interface LlmStatus {
  enabled: boolean;
  provider: string;
  provider_supported: boolean;
  base_url: string;
  model: string;
  key_configured: boolean;
  checked: boolean;
  reachable: boolean | null;
  detail: string;
}

const systemPrompt = (nowMs: number) =>
  [
    "You turn a question about captured SIP traffic into search filters.",
    "Answer with one JSON object and nothing else. Members, all optional:",
    `method (one of ${SIP_METHODS.join(", ")}; requests only), src_ip, dst_ip, ip (either address), call_id, from_user, to_user,`,
    "response_code (codes or classes separated by ;, e.g. 486;600 or 4xx;5xx), cseq_method (the method responses answer: INVITE for calls), user_agent (strings),",
    "time_range_label (last_hour, today, yesterday or custom), from_ms and to_ms (integers, Unix epoch milliseconds, UTC).",
    `The current time is ${nowMs} ms (${new Date(nowMs).toISOString()}). Omit every member the question does not name.`,
  ].join(" ");

const root = (cfg: LlmConfig) => cfg.base_url.replace(/\/+$/, "");

function httpFailure(status: number, what: string): LlmError {
  if (status === 401 || status === 403)
    return new LlmError(
      "unauthorized",
      `the language-model provider refused the key (HTTP ${status} from ${what}): check mcp.llm.api_key`,
    );
  if (status === 404)
    return new LlmError(
      "not_found",
      `the language-model provider has no ${what} route (HTTP 404): check mcp.llm.base_url (it ends with the API root, e.g. /v1)`,
    );
  return new LlmError("http_error", `the language-model provider answered HTTP ${status} to ${what}`);
}

async function call(cfg: LlmConfig, path: string, init: RequestInit): Promise<Response> {
  const headers = new Headers(init.headers);
  if (cfg.api_key !== "") headers.set("authorization", `Bearer ${cfg.api_key}`);
  try {
    return await fetch(`${root(cfg)}${path}`, {
      ...init,
      headers,
      signal: AbortSignal.timeout(cfg.timeout_sec * 1000),
    });
  } catch (e) {
    const name = (e as { name?: unknown }).name;
    if (name === "TimeoutError" || name === "AbortError")
      throw new LlmError(
        "timeout",
        `the language model did not answer within ${cfg.timeout_sec} s (mcp.llm.timeout_sec)`,
      );
    throw new LlmError(
      "unreachable",
      `the language-model provider cannot be reached at mcp.llm.base_url (${(e as Error).message})`,
    );
  }
}

export class LlmBridge {
  private inFlight = 0;

  constructor(readonly cfg: LlmConfig) {}

  get enabled(): boolean {
    return this.cfg.enable && this.cfg.provider.trim() !== "";
  }

  /** Filters from the model; LlmError on every failure (disabled, HTTP, time-out, non-JSON). */
  async parse(text: string, nowMs: number): Promise<LlmAnswer> {
    if (!this.enabled)
      throw new LlmError(
        "disabled",
        "the language-model bridge is disabled (mcp.llm.enable is false or mcp.llm.provider is empty)",
      );
    if (this.inFlight >= MAX_LLM_IN_FLIGHT)
      throw new LlmError(
        "busy",
        `${MAX_LLM_IN_FLIGHT} language-model calls are already running; try again when they are done`,
      );
    this.inFlight++;
    try {
      return await this.complete(text, nowMs);
    } finally {
      this.inFlight--;
    }
  }

  private async complete(text: string, nowMs: number): Promise<LlmAnswer> {
    const t0 = performance.now();
    const res = await call(this.cfg, "/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: this.cfg.model,
        temperature: this.cfg.temperature,
        max_tokens: this.cfg.max_tokens,
        response_format: { type: "json_object" },
        messages: [
          { role: "system", content: systemPrompt(nowMs) },
          { role: "user", content: text },
        ],
      }),
    });
    if (!res.ok) {
      await res.body?.cancel();
      throw httpFailure(res.status, "/chat/completions");
    }
    let content: unknown;
    try {
      const body = (await res.json()) as { choices?: Array<{ message?: { content?: unknown } }> };
      content = body.choices?.[0]?.message?.content;
    } catch {
      throw new LlmError("decode", "the language-model provider's answer is not JSON");
    }
    if (typeof content !== "string")
      throw new LlmError("decode", "the language-model answer has no choices[0].message.content");
    let decoded: unknown;
    try {
      decoded = JSON.parse(content.trim().replace(/^```(?:json)?\s*|\s*```$/g, ""));
    } catch {
      throw new LlmError("decode", "the model returned non-JSON content (a JSON object of filters was asked for)");
    }
    const filters = filtersFromModel(decoded);
    if (typeof filters === "string") throw new LlmError("decode", filters);
    return { filters, model: this.cfg.model, latencyMs: Math.round(performance.now() - t0) };
  }

  /** `GET /mcp/llm/status` (docs/MCP.md "Language model"): configuration, and with `check` a probe of `<base_url>/models`; never the key. */
  async status(check: boolean): Promise<LlmStatus> {
    const base: LlmStatus = {
      enabled: this.cfg.enable,
      provider: this.cfg.provider,
      provider_supported: this.cfg.provider.trim() !== "",
      base_url: this.cfg.base_url,
      model: this.cfg.model,
      key_configured: this.cfg.api_key !== "",
      checked: false,
      reachable: null,
      detail: this.cfg.enable ? "not checked" : "disabled (mcp.llm.enable is false)",
    };
    if (!check) return base;
    try {
      const res = await call(this.cfg, "/models", { method: "GET" });
      await res.body?.cancel();
      if (!res.ok) throw httpFailure(res.status, "/models");
      return { ...base, checked: true, reachable: true, detail: `GET /models answered HTTP ${res.status}` };
    } catch (e) {
      return { ...base, checked: true, reachable: false, detail: e instanceof LlmError ? e.message : "probe failed" };
    }
  }
}
