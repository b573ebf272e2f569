/**
 * The browser's client of `/api/v4/stream/hep` (docs/STREAM.md), shared by the results widget's
 * Live mode and the call view's live ladder: a plain GET first checks the session and the filter
 * (a refused WebSocket handshake tells a browser nothing), then the WebSocket (the session cookie
 * goes with the handshake). A lost connection is tried again after 1 s doubling up to 30 s with
 * ±20 % jitter; when it is back, the caller is told the gap (from the loss to the reconnect).
 */
import { ApiError, API_BASE, errorText, get } from "./api.ts";
import { serverFeatures } from "./state.ts";

/** A stream frame (docs/STREAM.md "Frames"); members may be missing. */
export interface LiveFrame {
  ts: number;
  proto: number;
  src_ip?: string;
  src_port?: number;
  dst_ip?: string;
  dst_port?: number;
  node_id?: number;
  sip?: {
    method: string;
    resp_code: string;
    resp_text: string;
    callid: string;
    cseq: string;
    from_user: string;
    to_user: string;
    ruri_user?: string;
  };
  payload?: string;
  payload_encoding?: "base64";
}

export type LiveConn =
  | { state: "checking" }
  | { state: "connecting" }
  | { state: "live" }
  | { state: "retry"; at: number; reason: string }
  | { state: "off"; message: string };

export interface LiveHandlers {
  frame(f: LiveFrame): void;
  state(c: LiveConn): void;
  /** The connection is back after a loss: frames between `from` and `to` (epoch ms) were not received. */
  gap(from: number, to: number): void;
}

/** Backoff before try `attempt` (0-based): 1 s doubling, ±20 % jitter so clients spread out, never above 30 s. */
export const retryDelayMs = (attempt: number, random = Math.random()) =>
  Math.round(Math.min(30_000, 1000 * 2 ** Math.min(attempt, 16) * (0.8 + random * 0.4)));

const STREAM_OFF = "The live stream is off on this server (coordinator.hep_stream.enable).";

async function preflight(query: string): Promise<{ ok: true } | { ok: false; message: string; final: boolean }> {
  // /me said so: no request that would only answer 404 (and log a failed load in the browser).
  if (serverFeatures.get()?.live_stream === false) return { ok: false, final: true, message: STREAM_OFF };
  try {
    await get(`/stream/hep?${query}`);
    return { ok: true };
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return { ok: false, final: true, message: STREAM_OFF };
    // A lost session or a refused filter does not mend by trying again.
    return { ok: false, final: e instanceof ApiError && (e.status === 401 || e.status === 400), message: errorText(e) };
  }
}

/**
 * Subscribes to the stream with `query` (already URL-encoded) until the returned function is
 * called. `query(reconnect)` may differ per try (the live ladder asks for history on each one).
 */
export function openLiveStream(query: (reconnect: boolean) => string, h: LiveHandlers): () => void {
  let ws: WebSocket | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let attempt = 0;
  let lostAt: number | undefined;
  const retry = (reason: string) => {
    if (stopped) return;
    const delay = retryDelayMs(attempt++);
    h.state({ state: "retry", at: Date.now() + delay, reason });
    timer = setTimeout(() => void connect(), delay);
  };
  const connect = async () => {
    h.state({ state: "checking" });
    const q = query(lostAt !== undefined);
    const p = await preflight(q);
    if (stopped) return;
    if (!p.ok) {
      if (p.final) h.state({ state: "off", message: p.message });
      else retry(p.message);
      return;
    }
    h.state({ state: "connecting" });
    const sock = new WebSocket(
      `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}${API_BASE}/stream/hep?${q}`,
    );
    ws = sock;
    sock.onopen = () => {
      attempt = 0;
      if (lostAt !== undefined) h.gap(lostAt, Date.now());
      lostAt = undefined;
      h.state({ state: "live" });
    };
    sock.onmessage = (e: MessageEvent) => {
      let f: LiveFrame;
      try {
        f = JSON.parse(String(e.data)) as LiveFrame;
      } catch {
        return;
      }
      h.frame(f);
    };
    sock.onclose = (e: CloseEvent) => {
      if (stopped || ws !== sock) return;
      lostAt ??= Date.now();
      retry(e.reason || (e.code === 1006 ? "the connection was lost" : `closed (${e.code})`));
    };
  };
  void connect();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    ws?.close(1000, "live view closed");
  };
}
