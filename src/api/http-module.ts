import type { AnyElysia } from "elysia";
import { formatAddress, listenError, parseListen, type Logger, type Module } from "../core/index.ts";

/** Runs an Elysia app as a lifecycle module on a configured listen address. */
export interface HttpModule extends Module {
  /** Port actually bound (differs from config when it asked for port 0). */
  port(): number;
  url(): string;
}

export interface HttpModuleOptions {
  name: string;
  listen: string;
  listenKey: string;
  /** Seconds a connection may stay idle (Bun caps this at 255). */
  idleTimeoutSec?: number;
  maxBodyBytes?: number;
  tls?: { cert: string; key: string; ca?: string; requestCert?: boolean } | undefined;
  /**
   * SO_REUSEPORT: let other processes bind the same address. Off unless config asks: Elysia's Bun
   * adapter turns it on by default, and then a second svc starts on a taken port and the kernel
   * splits the connections between two appliances (docs/ARCHITECTURE.md "Listeners").
   */
  reusePort?: boolean;
  /** Config key of `reusePort`, named in the error for a taken port. */
  reusePortKey?: string;
}

export function createHttpModule(app: AnyElysia, opts: HttpModuleOptions, logger: Logger): HttpModule {
  const addr = parseListen(opts.listen, opts.listenKey);
  let boundPort = 0;
  let started = false;
  return {
    name: opts.name,
    async start() {
      // Plugins created asynchronously (@elysiajs/static lists its directory first) are mounted
      // once they resolve; no request may arrive before (docs/ARCHITECTURE.md "The dashboard").
      await app.modules;
      try {
        app.listen({
          hostname: addr.hostname,
          port: addr.port,
          idleTimeout: Math.min(255, Math.max(1, opts.idleTimeoutSec ?? 30)),
          maxRequestBodySize: opts.maxBodyBytes,
          reusePort: opts.reusePort ?? false,
          ...(opts.tls
            ? {
                tls: {
                  cert: Bun.file(opts.tls.cert),
                  key: Bun.file(opts.tls.key),
                  ...(opts.tls.ca ? { ca: Bun.file(opts.tls.ca), requestCert: true, rejectUnauthorized: true } : {}),
                },
              }
            : {}),
        });
      } catch (e) {
        throw listenError(
          opts.name,
          opts.listen,
          opts.listenKey,
          e,
          opts.reusePortKey ? `; to share it on purpose set ${opts.reusePortKey} = true` : "",
        );
      }
      boundPort = app.server?.port ?? addr.port;
      started = true;
      logger.info("listening", {
        module: opts.name,
        address: formatAddress(addr.hostname, boundPort),
        tls: Boolean(opts.tls),
      });
    },
    async stop() {
      if (!started) return;
      started = false;
      await app.stop(true);
    },
    port: () => boundPort,
    url: () =>
      `${opts.tls ? "https" : "http"}://${addr.hostname === "0.0.0.0" ? "127.0.0.1" : addr.hostname.includes(":") ? `[${addr.hostname === "::" ? "::1" : addr.hostname}]` : addr.hostname}:${boundPort}`,
  };
}
