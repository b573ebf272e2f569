/**
 * Ask widget: a question in plain language → `POST /mcp/query` (docs/MCP.md). Shows what was
 * understood and which words were ignored (docs/MCP.md "Answers"), the filters the parser found,
 * which parser answered (and why the model was not used), the generated SQL in sql mode, and the
 * matching messages.
 */
import { useState } from "preact/hooks";
import { errorText, post } from "../lib/api.ts";
import { html } from "../lib/html.ts";
import type { WidgetProps } from "./types.ts";

interface Answer {
  mode: "structured" | "sql";
  understood: boolean;
  ignored: string[];
  summary: string;
  normalized_filters: Record<string, string | number>;
  generated_sql?: string;
  total: number;
  items: Array<Record<string, unknown>>;
  api_payload: { param: { limit: number } };
  meta: {
    parser: { used: string; requested: string; model: string | null; latency_ms: number | null; error?: string };
  };
}

const FILTER_LABELS: Array<[string, string]> = [
  ["method", "Method"],
  ["call_id", "Call-ID"],
  ["from_user", "Caller"],
  ["to_user", "Callee"],
  ["src_ip", "Source IP"],
  ["dst_ip", "Destination IP"],
  ["ip", "IP (either end)"],
  ["response_code", "Response"],
  ["cseq_method", "Answering"],
  ["user_agent", "User agent"],
  ["time_range_label", "Range"],
];
const PARSER_TEXT: Record<string, string> = {
  llm: "language model",
  regex: "regex parser",
  regex_fallback: "regex parser (language model failed)",
};
const utc = (ms: number, withMs = false) =>
  new Date(ms)
    .toISOString()
    .replace("T", " ")
    .replace(withMs ? /Z$/ : /\.\d+Z$/, " UTC")
    .replace(/Z$/, "");
/** Capture time in UTC with milliseconds: the search gives timestamp_us, SQL rows DuckDB's UTC timestamp text. */
const timeOf = (r: Record<string, unknown>) =>
  typeof r.timestamp_us === "number"
    ? utc(Math.floor(r.timestamp_us / 1000), true)
    : typeof r.timestamp === "string"
      ? `${r.timestamp.replace("T", " ").replace(/Z$/, "")} UTC`
      : "";

export function Ask(_: WidgetProps) {
  const [text, setText] = useState("");
  const [mode, setMode] = useState("auto");
  const [parser, setParser] = useState("auto");
  const [limit, setLimit] = useState(100);
  const [state, setState] = useState<
    { kind: "idle" } | { kind: "loading" } | { kind: "error"; message: string } | { kind: "done"; answer: Answer }
  >({ kind: "idle" });

  const ask = async (e: Event) => {
    e.preventDefault();
    if (text.trim() === "") return;
    setState({ kind: "loading" });
    try {
      setState({ kind: "done", answer: await post<Answer>("/mcp/query", { query_text: text, mode, parser, limit }) });
    } catch (err) {
      setState({ kind: "error", message: errorText(err) });
    }
  };

  let body = null;
  if (state.kind === "loading") body = html`<p class="loading" role="status">Asking…</p>`;
  else if (state.kind === "error") body = html`<p class="alert alert-error" role="alert">${state.message}</p>`;
  else if (state.kind === "done") {
    const a = state.answer;
    const f = a.normalized_filters;
    const p = a.meta.parser;
    const limited = a.items.length >= a.api_payload.param.limit && a.total > a.items.length;
    body = html`<div class="ask-answer">
      <p class="ask-parser" role="status">
        Parsed by the ${PARSER_TEXT[p.used] ?? p.used}${p.model && p.used === "llm" ? ` (${p.model}, ${p.latency_ms} ms)` : ""} · ${a.mode === "sql" ? "SQL" : "structured search"}
      </p>
      <p class=${a.understood ? "ask-summary" : "ask-summary alert alert-warn"} aria-label="Understood">${a.summary}</p>
      ${p.error && html`<p class="alert alert-warn">Language model: ${p.error}</p>`}
      <dl class="ask-filters" aria-label="Parsed filters">
        ${FILTER_LABELS.filter(([k]) => f[k] !== undefined).map(([k, label]) => html`<div key=${k}><dt>${label}</dt><dd>${String(f[k])}</dd></div>`)}
        <div><dt>From</dt><dd>${utc(Number(f.from_ms))}</dd></div>
        <div><dt>To</dt><dd>${utc(Number(f.to_ms))}</dd></div>
      </dl>
      ${a.generated_sql && html`<pre class="ask-sql" aria-label="Generated SQL">${a.generated_sql}</pre>`}
      ${
        !a.understood
          ? null
          : a.items.length === 0
            ? html`<div class="empty"><p>No messages match these filters.</p></div>`
            : html`<p class="count">${limited ? `Showing the newest ${a.items.length} of ${a.total} messages (limit reached; narrow the question)` : `${a.items.length} message${a.items.length === 1 ? "" : "s"}`}</p>
            <div class="ask-table-wrap">
              <table class="ask-table" aria-label="Answer">
                <thead><tr><th>Time</th><th>Method</th><th>Caller</th><th>Callee</th><th>Source</th><th>Destination</th><th>Call-ID</th></tr></thead>
                <tbody>
                  ${a.items.map(
                    (r, i) => html`<tr key=${i}>
                      <td>${timeOf(r)}</td><td>${String(r.method ?? "")}${r.response_code ? ` ${String(r.response_code)}` : ""}</td><td>${String(r.caller ?? "")}</td><td>${String(r.callee ?? "")}</td>
                      <td>${String(r.src_ip ?? "")}:${String(r.src_port ?? "")}</td><td>${String(r.dst_ip ?? "")}:${String(r.dst_port ?? "")}</td><td>${String(r.session_id ?? "")}</td>
                    </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
      }
    </div>`;
  }

  return html`<div class="ask">
    <form class="ask-form" onSubmit=${ask}>
      <label class="ask-question">
        <span class="sr-only">Question</span>
        <input type="search" value=${text} placeholder="e.g. INVITE from caller 1001 today, or: show sql call-id abc@pbx" aria-label="Question" onInput=${(e: Event) => setText((e.target as HTMLInputElement).value)} />
      </label>
      <select aria-label="Mode" value=${mode} onChange=${(e: Event) => setMode((e.target as HTMLSelectElement).value)}>
        <option value="auto">Auto</option><option value="structured">Structured</option><option value="sql">SQL</option>
      </select>
      <select aria-label="Parser" value=${parser} onChange=${(e: Event) => setParser((e.target as HTMLSelectElement).value)}>
        <option value="auto">Auto parser</option><option value="regex">Regex</option><option value="llm">Language model</option>
      </select>
      <label class="ask-limit">Rows <input type="number" min="1" max="50000" value=${limit} aria-label="Rows" onInput=${(e: Event) => setLimit(Math.max(1, Math.min(50_000, Math.floor(Number((e.target as HTMLInputElement).value)) || 100)))} /></label>
      <button type="submit" class="btn btn-primary" disabled=${state.kind === "loading" || text.trim() === ""}>Ask</button>
    </form>
    ${body}
  </div>`;
}
