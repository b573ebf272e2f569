import { hostname } from "node:os";
import type { Config } from "../config/index.ts";
import {
  AppError,
  clientTlsOptions,
  errorMessage,
  loadClientTls,
  parseListen,
  type Logger,
  type Module,
} from "../core/index.ts";

/**
 * The edge's side of enrolment (docs/DEPLOY.md "Finding the edges"): with node.enroll.enable the
 * node announces its name, node URL and node token to the coordinator's `POST
 * <url>/cluster/enroll` (the enrolment token as `Authorization: Bearer`) at start and every
 * `interval_sec`, so a changed address reaches the coordinator without anyone editing
 * coordinator.nodes. A refused or failed announcement is logged (never with a token) and tried
 * again at the next interval; the start does not wait for the coordinator.
 */
export type EnrollState =
  | { state: "waiting" }
  | { state: "enrolled"; status: "pending" | "approved" }
  | { state: "refused" | "failed"; reason: string };

const ANNOUNCE_TIMEOUT_MS = 10_000;
const WILDCARDS = new Set(["", "0.0.0.0", "::", "[::]"]);

export class EnrollAnnouncer implements Module {
  readonly name = "enroll-announcer";
  private timer: ReturnType<typeof setInterval> | undefined;
  private current: EnrollState = { state: "waiting" };
  private inFlight: Promise<void> | undefined;
  private readonly tls: ReturnType<typeof clientTlsOptions>;
  private readonly edgeName: string;

  constructor(
    private readonly config: Config["node"]["enroll"],
    private readonly node: { listen: string; url: () => string; token: string | undefined },
    private readonly logger: Logger,
  ) {
    // A wildcard listen names no address the coordinator could use (docs/DEPLOY.md "Finding the edges").
    if (!config.node_url && WILDCARDS.has(parseListen(node.listen, "node.http_server.listen").hostname)) {
      throw new AppError(
        "CONFIG_INVALID",
        `node.enroll.node_url: node.http_server.listen "${node.listen}" listens on every address; set the URL the coordinator reaches this node port at`,
      );
    }
    this.tls = clientTlsOptions(loadClientTls({ ca: config.ca }, "node.enroll"));
    this.edgeName = config.name || hostname();
  }

  /** What the last announcement did. */
  state(): EnrollState {
    return this.current;
  }

  async start(): Promise<void> {
    this.announce();
    this.timer = setInterval(() => this.announce(), this.config.interval_sec * 1000);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.inFlight;
  }

  /** One announcement, unless one is still under way. */
  announce(): Promise<void> {
    this.inFlight ??= this.send().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async send(): Promise<void> {
    const nodeUrl = this.config.node_url || this.node.url();
    const target = `${this.config.url.replace(/\/+$/, "")}/cluster/enroll`;
    let next: EnrollState;
    try {
      const res = await fetch(target, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${this.config.token}` },
        body: JSON.stringify({
          name: this.edgeName,
          url: nodeUrl,
          ...(this.node.token ? { token: this.node.token } : {}),
        }),
        signal: AbortSignal.timeout(ANNOUNCE_TIMEOUT_MS),
        ...this.tls,
      });
      const body = (await res.json().catch(() => ({}))) as { data?: { status?: string }; message?: string };
      if (res.ok && (body.data?.status === "approved" || body.data?.status === "pending"))
        next = { state: "enrolled", status: body.data.status };
      else next = { state: "refused", reason: `HTTP ${res.status}${body.message ? `: ${body.message}` : ""}` };
    } catch (e) {
      next = { state: "failed", reason: errorMessage(e) };
    }
    const was = this.current;
    this.current = next;
    if (JSON.stringify(was) === JSON.stringify(next)) return;
    const fields = { coordinator: this.config.url, name: this.edgeName, node_url: nodeUrl };
    if (next.state === "enrolled")
      this.logger.info(`enrolment: the coordinator has this node as ${next.status}`, fields);
    else
      this.logger.warn(
        `enrolment: the announcement ${next.state === "refused" ? "was refused" : "failed"}; trying again in ${this.config.interval_sec} s`,
        { ...fields, reason: next.reason },
      );
  }
}
