/**
 * The one shared connection of a `t1`/`l1` client, opened again when the peer has closed it (an
 * idle time-out while the run was paused, a proxy restart): the next call opens a new connection,
 * and calls started while it is being opened wait for the same one (docs/LOADGEN.md "Engine").
 */
import type { Leg } from "./call-host.ts";

export class Reconnect {
  private opening: Promise<Leg> | undefined;

  constructor(private readonly open: () => Promise<Leg>) {}

  /** The new connection; one attempt at a time, a failed attempt is retried by the next call. */
  leg(): Promise<Leg> {
    this.opening ??= this.open().then(
      (leg) => {
        this.opening = undefined;
        return leg;
      },
      (e: Error) => {
        this.opening = undefined;
        throw e;
      },
    );
    return this.opening;
  }
}
