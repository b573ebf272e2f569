import {
  AppError,
  errorMessage,
  fail,
  ok,
  type Counter,
  type Gauge,
  type Logger,
  type MetricsRegistry,
  type Module,
  type Result,
} from "../core/index.ts";
import {
  CLOSE,
  Outbox,
  StreamSlots,
  closeReason,
  filterQuery,
  outboxCounters,
  streamMetrics,
  type Outlet,
  type SlotHolder,
  type SlotLimits,
  type SlotRefusal,
  type StreamBroker,
  type StreamCaller,
  type StreamFilter,
  type StreamSource,
  type StreamSubscription,
} from "../stream/index.ts";
import { nodeFetchOptions } from "./node-tls.ts";
import type { ClusterNode } from "./nodes.ts";

/**
 * The coordinator's side of `/api/v4/stream/hep` (docs/STREAM.md "Coordinator fan-in"): one
 * client's events come from the in-process broker when this process runs the HEP ingest, and from
 * every node of coordinator.nodes over its node `/stream` with the node's token, with the client's filter.
 * A node link that does not open within `fan_out_timeout_ms`, or drops, is tried again with
 * exponential backoff (0.5 s doubling to 30 s, ±20 % jitter); the client sees a gap meanwhile and
 * never waits for a node. A node that refuses the subscriber (its cap, close 1013) closes the
 * client with that reason. A node's `/stream` never sends the payload (its clients are anonymous,
 * docs/STREAM.md "Security"), so it is not asked for. The client's slot is taken in the in-process
 * broker, or without one in the hub's own slots under the same limits (docs/STREAM.md "Subscriber
 * slots").
 */
export interface StreamHubOptions {
  broker?: StreamBroker;
  /**
   * Node base URLs (http(s)://host:port of node.http_server) or ws(s):// URLs of their /stream,
   * with the node token and the TLS material of an https:// node (src/cluster/node-tls.ts).
   */
  nodes: ReadonlyArray<Pick<ClusterNode, "url" | "token" | "ca" | "cert" | "key">>;
  fanOutTimeoutMs: number;
  /** The per-client queue when no in-process broker supplies one (ingest.hep_stream.per_sub_queue_len). */
  queueLen: number;
  /** The slots when no in-process broker holds them (ingest.hep_stream.max_subscribers and its shares). */
  limits: SlotLimits;
  metrics: MetricsRegistry;
  logger: Logger;
}

const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 30_000;

/** `http://10.0.0.2:8081` → `ws://10.0.0.2:8081/stream`; throws CONFIG_INVALID naming the key. */
export function nodeStreamUrl(node: string): string {
  const raw = node.trim();
  let u: URL;
  try {
    u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`);
  } catch {
    throw new AppError(
      "CONFIG_INVALID",
      `coordinator.hep_stream.nodes: "${node}" is not a URL or host:port of a node port`,
    );
  }
  const scheme = { "http:": "ws:", "https:": "wss:", "ws:": "ws:", "wss:": "wss:" }[u.protocol];
  if (!scheme || !u.port)
    throw new AppError(
      "CONFIG_INVALID",
      `coordinator.hep_stream.nodes: "${node}" must be http(s):// or ws(s):// with the node port (node.http_server.listen)`,
    );
  const path = u.pathname.replace(/\/+$/, "");
  return `${scheme}//${u.host}${path.endsWith("/stream") ? path : `${path}/stream`}`;
}

/**
 * Bun's WebSocket client takes `{ tls }` as its second argument; the DOM library's declaration,
 * which wins overload resolution here, knows only protocols.
 */
const BunWebSocket = WebSocket as unknown as new (url: string, options?: Bun.WebSocketOptions) => WebSocket;

interface LinkDeps {
  timeoutMs: number;
  logger: Logger;
  reconnects: Counter<"node">;
  connected: Gauge<"node">;
  /** The node refused this subscriber (close 1013): the client is closed with its reason. */
  refused(reason: string): void;
}

/** One client's connection to one node's /stream, reconnecting with backoff until stopped. */
class NodeLink {
  private ws: WebSocket | undefined;
  private attempt = 0;
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private first = true;

  constructor(
    private readonly node: string,
    private readonly url: string,
    /** The node token (coordinator.nodes[].token), sent as Authorization: Bearer (docs/STREAM.md "Security"). */
    private readonly token: string | undefined,
    private readonly tls: ReturnType<typeof nodeFetchOptions>,
    private readonly filter: StreamFilter,
    private readonly outbox: Outbox,
    private readonly d: LinkDeps,
  ) {}

  start(): void {
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.ws?.close(1000, "subscriber left");
  }

  private connect(): void {
    // History only on the first connect: after a gap a replay would repeat events already sent.
    const query = filterQuery({ ...this.filter, includePayload: false, ...(this.first ? {} : { history: 0 }) });
    let open = false;
    let ws: WebSocket;
    try {
      // The node's token, CA and client certificate, as its searches (docs/ARCHITECTURE.md "Node authentication").
      const target = query ? `${this.url}?${query}` : this.url;
      ws = new BunWebSocket(target, {
        ...this.tls,
        ...(this.token ? { headers: { authorization: `Bearer ${this.token}` } } : {}),
      });
    } catch (e) {
      this.d.logger.warn("live stream: cannot connect to node", { node: this.node, error: errorMessage(e) });
      this.retry();
      return;
    }
    this.ws = ws;
    const handshake = setTimeout(() => {
      if (!open) ws.close();
    }, this.d.timeoutMs);
    ws.onopen = () => {
      clearTimeout(handshake);
      open = true;
      this.first = false;
      this.attempt = 0;
      this.d.connected.inc({ node: this.node });
    };
    ws.onmessage = (e: MessageEvent) => {
      this.outbox.push(typeof e.data === "string" ? e.data : new TextDecoder().decode(e.data as ArrayBuffer));
    };
    ws.onerror = () => {};
    ws.onclose = (e: CloseEvent) => {
      clearTimeout(handshake);
      if (open) this.d.connected.inc({ node: this.node }, -1);
      if (this.stopped) return;
      if (e.code === CLOSE.tryAgainLater) {
        this.d.refused(`node ${this.node}: ${e.reason}`);
        return;
      }
      this.retry();
    };
  }

  private retry(): void {
    if (this.stopped) return;
    const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** this.attempt) * (0.8 + Math.random() * 0.4);
    this.attempt++;
    this.d.reconnects.inc({ node: this.node });
    this.timer = setTimeout(() => this.connect(), delay);
  }
}

export class StreamHub implements StreamSource, Module {
  readonly name = "stream-hub";
  private readonly urls: Array<{ node: string; url: string; token?: string; tls: ReturnType<typeof nodeFetchOptions> }>;
  private readonly clients = new Set<StreamSubscription>();
  /** Slots of the clients when there is no in-process broker (which holds them otherwise). */
  private readonly slots: StreamSlots<SlotHolder>;
  private readonly reconnects: Counter<"node">;
  private readonly connected: Gauge<"node">;

  constructor(private readonly o: StreamHubOptions) {
    this.urls = o.nodes.map((n) => ({
      node: n.url,
      url: nodeStreamUrl(n.url),
      ...(n.token ? { token: n.token } : {}),
      tls: nodeFetchOptions(n),
    }));
    this.slots = new StreamSlots(o.limits, streamMetrics(o.metrics));
    this.reconnects = o.metrics.counter(
      "svc_stream_node_reconnects_total",
      "Times the coordinator tried a node's /stream again after a failed or dropped connection, per node.",
      ["node"],
    );
    this.connected = o.metrics.gauge(
      "svc_stream_node_connections",
      "Open coordinator connections to each node's /stream (one per client).",
      ["node"],
    );
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {
    for (const c of [...this.clients]) {
      c.outbox.close(CLOSE.goingAway, "the server is stopping");
      c.close();
    }
  }

  subscribe(
    filter: StreamFilter,
    outlet: Outlet,
    caller: StreamCaller,
  ): Result<StreamSubscription, SlotRefusal | "unavailable"> {
    let local: StreamSubscription | undefined;
    let outbox: Outbox;
    if (this.o.broker) {
      const r = this.o.broker.subscribe(filter, outlet, caller);
      if (!r.ok) return r;
      local = r.value;
      outbox = local.outbox;
    } else if (this.urls.length > 0) {
      outbox = new Outbox(outlet, this.o.queueLen, outboxCounters(streamMetrics(this.o.metrics)));
    } else {
      return fail(
        "unavailable",
        "no source of live events: this process has no HEP ingest and coordinator.hep_stream.nodes is empty",
      );
    }
    const links: NodeLink[] = [];
    const sub: StreamSubscription & SlotHolder = {
      outbox,
      caller,
      close: () => {
        if (!this.clients.delete(sub)) return;
        this.slots.release(sub);
        local?.close();
        for (const l of links) l.stop();
      },
      giveWay: (code, reason) => {
        outbox.close(code, reason);
        sub.close();
      },
    };
    if (!local) {
      const slot = this.slots.claim(sub);
      if (!slot.ok) return slot;
    }
    const deps: LinkDeps = {
      timeoutMs: this.o.fanOutTimeoutMs,
      logger: this.o.logger,
      reconnects: this.reconnects,
      connected: this.connected,
      refused: (reason) => {
        outbox.close(CLOSE.tryAgainLater, closeReason(reason));
        sub.close();
      },
    };
    for (const { node, url, token, tls } of this.urls)
      links.push(new NodeLink(node, url, token, tls, filter, outbox, deps));
    this.clients.add(sub);
    for (const l of links) l.start();
    return ok(sub);
  }
}
