/** One message: decoded (start line, headers, SDP) from `GET /messages/{uuid}/decoded`, or raw text. */
import { useEffect, useState } from "preact/hooks";
import { errorText, get } from "../lib/api.ts";
import { html } from "../lib/html.ts";
import { formatTime, hostLabel } from "../lib/format.ts";
import type { TxMessage } from "../lib/transaction.ts";
import type { CallEvent } from "../lib/ladder-model.ts";

interface Decoded {
  firstLine?: string;
  kind?: string;
  headers?: Array<{ name: string; value: string }>;
  body?: string;
  sdp?: {
    media: Array<{
      type: string;
      port: number;
      proto: string;
      address?: string;
      direction: string;
      codecs: Array<{ payloadType: number; name: string; clockRate?: number }>;
    }>;
  };
  error?: string;
}

/** `heading` names a row that is not a numbered SIP message (an RTCP report, a log line). */
export function MessageDetail({
  message,
  index,
  heading,
}: {
  /** A SIP message, or an event row (RTCP, media report, log), whose addresses may be NULL. */
  message: TxMessage | CallEvent;
  index: number;
  heading?: string | undefined;
}) {
  const [view, setView] = useState<"decoded" | "raw">("decoded");
  const [decoded, setDecoded] = useState<Decoded | null>(null);
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    setDecoded(null);
    setError(undefined);
    // A reply for the row selected before (the user moved on quickly) must not show under this one.
    let current = true;
    get<{ data: { decoded: Decoded } }>(`/messages/${message.uuid}/decoded`).then(
      (r) => current && setDecoded(r.data.decoded),
      (e) => current && setError(errorText(e)),
    );
    return () => {
      current = false;
    };
  }, [message.uuid]);

  return html`<section class="msg-detail" aria-label=${heading ?? `Message ${index + 1}`}>
    <header class="msg-head">
      <strong>${heading ?? `#${index + 1}`}</strong>
      <span class="mono">${formatTime(message.timestamp_us / 1000)}</span>
      <span class="mono">${message.src_ip === null ? "—" : hostLabel(message.src_ip, message.src_port, message.src_alias)} → ${message.dst_ip === null ? "—" : hostLabel(message.dst_ip, message.dst_port, message.dst_alias)}</span>
      <span class="muted">${message.protocol ?? ""}</span>
      <span class="spacer"></span>
      <div class="seg" role="tablist" aria-label="Message view">
        <button type="button" role="tab" aria-selected=${view === "decoded" ? "true" : "false"} class=${view === "decoded" ? "active" : ""} onClick=${() => setView("decoded")}>Decoded</button>
        <button type="button" role="tab" aria-selected=${view === "raw" ? "true" : "false"} class=${view === "raw" ? "active" : ""} onClick=${() => setView("raw")}>Raw</button>
      </div>
    </header>
    ${
      view === "raw"
        ? html`<pre class="raw sip" aria-label="Raw message">${message.payload ?? ""}</pre>`
        : error
          ? html`<p class="alert alert-error" role="alert">The decoded message could not be loaded: ${error}</p>`
          : !decoded
            ? html`<p class="loading" role="status">Decoding…</p>`
            : message.proto_type !== undefined && message.proto_type !== 1
              ? html`<pre class="raw" aria-label="Decoded report">${typeof (decoded as { text?: unknown }).text === "string" ? (decoded as { text: string }).text : JSON.stringify(decoded, null, 2)}</pre>`
              : html`<div class="decoded">
              <p class="first-line mono">${decoded.firstLine ?? ""}</p>
              ${decoded.error && html`<p class="alert alert-warn">Parser note: ${decoded.error}</p>`}
              <table class="kv mono" aria-label="Headers">
                <tbody>
                  ${(decoded.headers ?? []).map((h, i) => html`<tr key=${i}><th scope="row">${h.name || "(malformed)"}</th><td>${h.value}</td></tr>`)}
                </tbody>
              </table>
              ${
                decoded.sdp &&
                html`<h4>SDP</h4>
                <table class="kv mono" aria-label="SDP media">
                  <tbody>
                    ${decoded.sdp.media.map(
                      (m, i) => html`<tr key=${i}>
                        <th scope="row">m=${m.type}</th>
                        <td>${m.address ?? "?"}:${m.port} ${m.proto} · ${m.direction} · ${m.codecs.map((c) => `${c.name}/${c.clockRate ?? ""} (${c.payloadType})`).join(", ")}</td>
                      </tr>`,
                    )}
                  </tbody>
                </table>`
              }
              ${!decoded.sdp && decoded.body && html`<h4>Body</h4><pre class="raw">${decoded.body}</pre>`}
            </div>`
    }
  </section>`;
}
