/**
 * A TCP proxy on 127.0.0.1:0 for link-failure tests: passes bytes both ways to `target` until
 * `cut()`, after which it passes nothing (connections stay open, bytes are swallowed, as on a
 * VPN that stopped routing) until `restore()`. `retarget(port)` points new connections elsewhere
 * (a peer restarted on another port).
 */
import type { Socket, TCPSocketListener } from "bun";

interface Side {
  peer?: Socket<Side>;
  queue: Uint8Array[];
  dead: boolean;
}

const flush = (s: Socket<Side>) => {
  const q = s.data.queue;
  while (q.length > 0) {
    const head = q[0]!;
    const n = s.write(head);
    if (n < head.length) {
      q[0] = head.subarray(Math.max(0, n));
      return;
    }
    q.shift();
  }
};

const send = (to: Socket<Side> | undefined, bytes: Uint8Array) => {
  if (!to || to.data.dead) return;
  to.data.queue.push(bytes.slice());
  flush(to);
};

export class TcpProxy {
  private server: TCPSocketListener<Side> | undefined;
  private passing = true;
  private readonly open = new Set<Socket<Side>>();

  constructor(private target: number) {}

  start(): this {
    this.server = Bun.listen<Side>({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open: (client) => {
          client.data = { queue: [], dead: false };
          this.open.add(client);
          void Bun.connect<Side>({
            hostname: "127.0.0.1",
            port: this.target,
            data: { queue: [], dead: false, peer: client },
            socket: {
              open: (up) => {
                up.data.peer = client;
                client.data.peer = up;
                this.open.add(up);
                // What the client sent before the upstream opened waited on the client's side.
                up.data.queue.push(...client.data.queue.splice(0));
                flush(up);
              },
              data: (up, bytes) => {
                if (this.passing) send(up.data.peer, bytes);
              },
              drain: (up) => flush(up),
              close: (up) => {
                up.data.dead = true;
                this.open.delete(up);
                up.data.peer?.end();
              },
              error: () => {},
              connectError: () => {
                client.end();
              },
            },
          }).catch(() => client.end());
        },
        data: (client, bytes) => {
          if (!this.passing) return;
          const up = client.data.peer;
          if (up) send(up, bytes);
          else client.data.queue.push(bytes.slice()); // sent when the upstream opens (queued on the client until then)
        },
        drain: (client) => flush(client),
        close: (client) => {
          client.data.dead = true;
          this.open.delete(client);
          client.data.peer?.end();
        },
        error: () => {},
      },
    });
    return this;
  }

  get port(): number {
    return this.server!.port;
  }

  /** Stops passing bytes; connections stay open. */
  cut(): void {
    this.passing = false;
  }

  restore(): void {
    this.passing = true;
  }

  retarget(port: number): void {
    this.target = port;
    for (const s of this.open) s.end();
  }

  stop(): void {
    for (const s of this.open) s.end();
    this.server?.stop(true);
  }
}
