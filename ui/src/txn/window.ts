/**
 * The transaction window, opened from a result row: the call's messages (with correlated legs) from
 * `POST /transactions/messages` as a ladder, a message list with decoded and raw views, call info,
 * QoS, and exports (PCAP, text, share link) honouring the user's excluded addresses.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { downloadFile, errorText, get, post } from "../lib/api.ts";
import { html } from "../lib/html.ts";
import { formatBytes, formatDelta, formatTime, hostLabel, eventClass, partialFileText } from "../lib/format.ts";
import { notify, openTransaction, type OpenTransaction } from "../lib/state.ts";
import { useStore } from "../lib/store.ts";
import type { TxMessage } from "../lib/transaction.ts";
import { CallInfo } from "./call-info.ts";
import type { Setting } from "../lib/types.ts";
import { CallIdList } from "./call-ids.ts";
import { LadderPanel } from "./ladder-panel.ts";
import { useLiveCall } from "./live-call.ts";
import { MessageDetail } from "./message-detail.ts";
import { QosTab } from "./qos.ts";
import { OtlpTab } from "./otlp.ts";

interface MessagesResponse {
  data: {
    items: TxMessage[];
    sessions: string[];
    hosts: Array<{ ip: string; alias: string | null }>;
    window: { from_ms: number; to_ms: number };
    lookup?: { from_ms: number; to_ms: number };
    /** Set when ingest shifted some message's time (docs/CALL-VIEW.md "Shifted times"). */
    time_shift?: { messages: number; shifts_us: number[]; note: string } | null;
  };
}

type Tab = "flow" | "messages" | "info" | "qos" | "otlp" | "export";
const TABS: Array<[Tab, string]> = [
  ["flow", "Flow"],
  ["messages", "Messages"],
  ["info", "Call info"],
  ["qos", "QoS"],
  ["otlp", "OpenTelemetry"],
  ["export", "Export"],
];

export function TransactionWindow() {
  const tx = useStore(openTransaction);
  if (!tx) return null;
  return html`<${TxDialog} key=${`${tx.sessionIds.join(";")}-${tx.from}`} tx=${tx} />`;
}

function TxDialog({ tx }: { tx: OpenTransaction }) {
  const [data, setData] = useState<MessagesResponse["data"] | null>(null);
  const [error, setError] = useState<string | undefined>();
  const [tab, setTab] = useState<Tab>("flow");
  const [selected, setSelected] = useState<string | undefined>();
  const heading = useRef<HTMLHeadingElement>(null);
  // Kept here, not in the Flow tab: the subscription lasts while the user reads the other tabs.
  const live = useLiveCall(data?.sessions ?? tx.sessionIds, data?.items ?? null);
  const request = useMemo(
    () => ({
      session_id: tx.sessionIds,
      proto_type: tx.protoType,
      event_type: tx.eventType,
      timestamp: { from: tx.from, to: tx.to },
    }),
    [tx],
  );

  // Focus before the first paint, so an Esc pressed as soon as the window shows closes it.
  useLayoutEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    heading.current?.focus();
    return () => before?.focus?.();
  }, []);
  useEffect(() => {
    post<MessagesResponse>("/transactions/messages", request).then(
      (r) => setData(r.data),
      (e) => setError(errorText(e)),
    );
  }, []);

  const close = () => openTransaction.set(null);
  const onKey = (e: KeyboardEvent) => {
    if (e.key === "Escape") {
      e.stopPropagation();
      close();
    }
  };
  const index = data ? data.items.findIndex((m) => m.uuid === selected) : -1;
  const message = index >= 0 ? data?.items[index] : undefined;

  let body;
  if (error) body = html`<p class="alert alert-error" role="alert">The call could not be loaded: ${error}</p>`;
  else if (!data) body = html`<p class="loading" role="status">Loading the call…</p>`;
  else if (tab === "flow")
    body = html`<${LadderPanel} items=${data.items} request=${request} selected=${selected} onSelect=${setSelected} live=${live} />`;
  else if (tab === "messages")
    body = html`<div class="split">
      <${MessageList} items=${data.items} selected=${selected} onSelect=${setSelected} />
      ${message ? html`<${MessageDetail} message=${message} index=${index} />` : html`<div class="empty side"><p>Select a message to read it.</p></div>`}
    </div>`;
  else if (tab === "info")
    body = html`<${CallInfo} items=${data.items} sessions=${data.sessions} window=${data.window} lookup=${data.lookup} />`;
  else if (tab === "qos") body = html`<${QosTab} request=${request} />`;
  else if (tab === "otlp") body = html`<${OtlpTab} request=${request} />`;
  else body = html`<${ExportTab} request=${request} tx=${tx} sessions=${data.sessions} />`;

  return html`<div class="overlay" onClick=${(e: MouseEvent) => e.target === e.currentTarget && close()}>
    <div class="dialog txn" role="dialog" aria-modal="true" aria-labelledby="txn-title" onKeyDown=${onKey}>
      <header class="dialog-head">
        <h2 id="txn-title" tabindex="-1" ref=${heading} title=${tx.sessionIds.join("\n")}>${tx.sessionIds.length > 1 ? `${tx.sessionIds.length} calls together` : html`Call <span class="mono">${tx.title}</span>`}</h2>
        ${
          data &&
          html`<span class="muted small"
          >${data.items.length} messages${live.items.length > 0 ? ` + ${live.items.length} live` : ""} · ${data.sessions.length} Call-ID${data.sessions.length === 1 ? "" : "s"}</span
        >`
        }
        <span class="spacer"></span>
        <${ExportButtons} request=${request} disabled=${!data} />
        <button type="button" class="icon-btn" aria-label="Close call window" onClick=${close}>✕</button>
      </header>
      <nav class="tabs tabs-sub" role="tablist" aria-label="Call views">
        ${TABS.map(
          ([k, label]) =>
            html`<button key=${k} type="button" role="tab" aria-selected=${tab === k ? "true" : "false"} class=${tab === k ? "tab active" : "tab"} onClick=${() => setTab(k)}>${label}</button>`,
        )}
      </nav>
      ${data && (tx.sessionIds.length > 1 || data.sessions.length > 1) && html`<${CallIdList} selected=${tx.sessionIds} sessions=${data.sessions} items=${data.items} />`}
      ${data?.time_shift && html`<p class="alert alert-warn txn-time-shift" role="note">${data.time_shift.note}</p>`}
      <div class="dialog-body">${body}</div>
    </div>
  </div>`;
}

function MessageList({
  items,
  selected,
  onSelect,
}: {
  items: TxMessage[];
  selected: string | undefined;
  onSelect: (u: string) => void;
}) {
  return html`<div class="table-wrap msg-list">
    <table class="grid-table" aria-label="Messages">
      <thead>
        <tr><th scope="col">#</th><th scope="col">Time</th><th scope="col">Δ</th><th scope="col">Source</th><th scope="col">Destination</th><th scope="col">Event</th><th scope="col">Call-ID</th></tr>
      </thead>
      <tbody>
        ${items.map((m, i) => {
          const prev = items[i - 1];
          return html`<tr
            key=${m.uuid}
            tabindex="0"
            class=${selected === m.uuid ? "selected" : ""}
            aria-selected=${selected === m.uuid ? "true" : "false"}
            onClick=${() => onSelect(m.uuid)}
            onKeyDown=${(e: KeyboardEvent) => {
              if (e.key === "Enter" || e.key === " ") {
                e.preventDefault();
                onSelect(m.uuid);
              } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
                e.preventDefault();
                const row = (e.currentTarget as HTMLElement)[
                  e.key === "ArrowDown" ? "nextElementSibling" : "previousElementSibling"
                ] as HTMLElement | null;
                row?.focus();
              }
            }}
          >
            <td>${i + 1}</td>
            <td class="mono">${formatTime(m.timestamp_us / 1000, false)}</td>
            <td class="mono muted">${prev ? formatDelta((m.timestamp_us - prev.timestamp_us) / 1000) : ""}</td>
            <td class="mono" title=${hostLabel(m.src_ip, m.src_port, m.src_alias)}>${hostLabel(m.src_ip, m.src_port, m.src_alias)}</td>
            <td class="mono" title=${hostLabel(m.dst_ip, m.dst_port, m.dst_alias)}>${hostLabel(m.dst_ip, m.dst_port, m.dst_alias)}</td>
            <td><span class=${`ev ${eventClass(m.event)}`}>${m.event}</span></td>
            <td class="mono" title=${m.session_id}>${m.session_id}</td>
          </tr>`;
        })}
      </tbody>
    </table>
  </div>`;
}

interface Exclusion {
  ip?: string;
  alias?: string;
  disabled?: boolean;
}

/** `keepWarning`: a partial file's warning also stays beside the buttons (the Export tab; docs/ARCHITECTURE.md "Reads over several nodes"). */
function ExportButtons({
  request,
  disabled,
  keepWarning = false,
}: {
  request: Record<string, unknown>;
  disabled: boolean;
  keepWarning?: boolean;
}) {
  const [busy, setBusy] = useState<string | undefined>();
  const [warning, setWarning] = useState<string | undefined>();
  const run = async (kind: "pcap" | "text") => {
    setBusy(kind);
    setWarning(undefined);
    try {
      const f = await downloadFile(`/transactions/export/${kind}`, request, `call.${kind === "pcap" ? "pcap" : "txt"}`);
      const partial = partialFileText(f.partial);
      if (partial) setWarning(`${f.fileName}: ${partial}`);
      // A partial file warns as long as an error does: a missing leg must not pass for an absent one.
      if (partial) notify(`${f.fileName} downloaded (${formatBytes(f.bytes)}). ${partial}`, "error");
      else notify(`${f.fileName} downloaded (${formatBytes(f.bytes)})`);
    } catch (e) {
      notify(`Export failed: ${errorText(e)}`, "error");
    } finally {
      setBusy(undefined);
    }
  };
  const buttons = html`<div class="btn-group" role="group" aria-label="Export">
    <button type="button" class="btn" disabled=${disabled || busy !== undefined} onClick=${() => run("pcap")}>${busy === "pcap" ? "Exporting…" : "Download PCAP"}</button>
    <button type="button" class="btn" disabled=${disabled || busy !== undefined} onClick=${() => run("text")}>${busy === "text" ? "Exporting…" : "Download text"}</button>
  </div>`;
  if (!keepWarning) return buttons;
  return html`${buttons}${warning && html`<p class="alert alert-warn" role="alert">${warning}</p>`}`;
}

function ExportTab({
  request,
  tx,
  sessions,
}: {
  request: Record<string, unknown>;
  tx: OpenTransaction;
  sessions: string[];
}) {
  const [exclusions, setExclusions] = useState<Exclusion[] | null>(null);
  const [useDefaults, setUseDefaults] = useState(true);
  const [share, setShare] = useState<{ pcap_url: string; text_url: string; expires_at: string } | null>(null);
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    get<{ data: { items: Setting[] } }>("/me/settings").then(
      (r) => {
        const s = r.data.items.find((x) => x.category === "export" && x.param === "transaction");
        setExclusions(Array.isArray(s?.data.excludedCIDR) ? (s.data.excludedCIDR as Exclusion[]) : []);
      },
      (e) => setError(errorText(e)),
    );
  }, []);
  const body = { ...request, use_default_exclusions: useDefaults };
  const createShare = async () => {
    setError(undefined);
    try {
      const r = await post<{ data: { pcap_url: string; text_url: string; expires_at: string } }>(
        "/transactions/export/link",
        body,
      );
      setShare(r.data);
    } catch (e) {
      setError(errorText(e));
    }
  };
  const copy = async (text: string) => {
    try {
      await navigator.clipboard.writeText(text);
      notify("Copied to the clipboard");
    } catch {
      notify("The browser refused the clipboard: select the text and copy it", "error");
    }
  };
  // Every Call-ID of the view: the search form reads "a;b" as several values (docs/DASHBOARD.md).
  const deep = `${location.origin}/?call_id=${encodeURIComponent(tx.sessionIds.join(";"))}&from=${tx.from}&to=${tx.to}`;
  const correlated = sessions.filter((s) => !tx.sessionIds.includes(s));
  const active = (exclusions ?? []).filter((x) => !x.disabled);
  return html`<div class="export">
    ${error && html`<p class="alert alert-error" role="alert">${error}</p>`}
    <p>
      ${sessions.length === 1 ? "Downloads and links hold the call " : `Downloads and links hold all ${sessions.length} Call-IDs of this view: `}<span class="mono export-ids">${[...tx.sessionIds, ...correlated].join(", ")}</span>${correlated.length > 0 ? ` (${correlated.length} correlated)` : ""}.
    </p>
    <section>
      <h3>Excluded addresses</h3>
      ${
        exclusions === null
          ? html`<p class="loading" role="status">Loading your export defaults…</p>`
          : active.length === 0
            ? html`<p class="muted">Your export defaults exclude nothing (Settings → Export).</p>`
            : html`<label class="check"
                ><input type="checkbox" checked=${useDefaults} onChange=${(e: Event) => setUseDefaults((e.target as HTMLInputElement).checked)} /> Leave out messages from or to:
                <span class="mono">${active.map((x) => x.ip ?? x.alias).join(", ")}</span></label
              >`
      }
    </section>
    <section>
      <h3>Download</h3>
      <${ExportButtons} request=${body} disabled=${false} keepWarning=${true} />
    </section>
    <section>
      <h3>Share</h3>
      <p class="muted">A share link lets anyone with it download this call (PCAP or text) without signing in, until it expires.</p>
      <button type="button" class="btn" onClick=${createShare}>Create share link</button>
      ${
        share &&
        html`<div class="share">
        <label>PCAP link <input readonly class="mono" value=${share.pcap_url} onFocus=${(e: Event) => (e.target as HTMLInputElement).select()} /></label>
        <button type="button" class="btn btn-ghost" onClick=${() => copy(share.pcap_url)}>Copy</button>
        <label>Text link <input readonly class="mono" value=${share.text_url} onFocus=${(e: Event) => (e.target as HTMLInputElement).select()} /></label>
        <button type="button" class="btn btn-ghost" onClick=${() => copy(share.text_url)}>Copy</button>
        <p class="muted small">Expires ${formatTime(Date.parse(share.expires_at))}</p>
      </div>`
      }
      <h3>Link to this search</h3>
      <div class="share">
        <label>Dashboard link <input readonly class="mono" value=${deep} onFocus=${(e: Event) => (e.target as HTMLInputElement).select()} /></label>
        <button type="button" class="btn btn-ghost" onClick=${() => copy(deep)}>Copy</button>
      </div>
    </section>
  </div>`;
}
