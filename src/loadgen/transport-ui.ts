/**
 * Transport `ui` (docs/LOADGEN.md "Engine", sipp's `-t ui`): UDP with one socket per IP address, the
 * addresses read from field `ip_field` (default 0) of the injection file's rows. A call sends from
 * the socket of its row's IP and advertises that IP (Via, Contact, SDP, Call-ID, `[local_ip]`); the
 * calls of one IP share its socket, and the answers come back to it.
 */
import { isIP } from "node:net";
import type { Leg } from "./call-host.ts";
import type { Injection } from "./injection.ts";
import { LoadgenUsageError, type LoadgenOptions } from "./options.ts";
import { advertisedIp, udpLeg, type TransportHooks, type TransportMode } from "./transport.ts";

/** The option rules of `-t ui` and `-ip_field` (docs/LOADGEN.md "Engine"); `modes` are the engine's bind modes. */
export function checkPerIpOptions(o: LoadgenOptions, client: boolean, modes: readonly TransportMode[]): void {
  const perIp = modes.some((m) => m.perIp);
  if (perIp && !client)
    throw new LoadgenUsageError(
      "transport ui is for client scenarios (uac, register, options or a client -sf); a server answers on the address it listens on",
    );
  // sipp reads -ip_field only with -t ui and ignores it otherwise; loadgen refuses a flag it would not act on.
  if (!perIp && o.ip_field >= 0)
    throw new LoadgenUsageError(`-ip_field ${o.ip_field} needs -t ui (the field holds each call's source IP)`);
  if (perIp && !o.injection_file)
    throw new LoadgenUsageError(
      "-t ui needs -inf <file>: the injection file names each call's source IP (field -ip_field, default 0)",
    );
}

/** The sockets of `ui`: one per distinct IP of the injection file, shared by the calls of that IP. */
export class PerIpSockets {
  private readonly byIp = new Map<string, Leg>();
  /** Distinct IP → the first file line naming it (for bind errors). */
  private readonly firstLine = new Map<string, number>();
  private readonly field: number;

  /** Checks that every row holds an IP address in the field, before a socket is bound. */
  constructor(
    private readonly injection: Injection,
    ipField: number,
    private readonly path: string,
  ) {
    this.field = Math.max(ipField, 0);
    for (const row of injection.rows) {
      const ip = row.fields[this.field]?.trim();
      if (ip === undefined)
        throw new LoadgenUsageError(
          `${path} line ${row.line}: no field ${this.field} (-ip_field ${this.field} names each call's source IP for -t ui)`,
        );
      if (isIP(ip) === 0)
        throw new LoadgenUsageError(
          `${path} line ${row.line}: field ${this.field} is "${ip}", not an IP address (-ip_field ${this.field}, -t ui)`,
        );
      if (!this.firstLine.has(ip)) this.firstLine.set(ip, row.line);
    }
  }

  /**
   * Binds every IP's socket (at `port`, 0 = ephemeral). An address the host does not have, or of the
   * other family than the remote address (an IPv6 socket cannot reach an IPv4 peer), fails the start.
   */
  async bind(port: number, hooks: TransportHooks, remoteIp: string): Promise<Leg[]> {
    for (const [ip, line] of this.firstLine) {
      if (isIP(remoteIp) !== 0 && isIP(ip) !== isIP(remoteIp))
        throw new LoadgenUsageError(
          `-t ui cannot send from ${ip} (${this.path} line ${line}, field ${this.field}) to ${remoteIp}: not the same IP version`,
        );
      try {
        this.byIp.set(ip, await udpLeg(ip, port, advertisedIp(ip), hooks));
      } catch (e) {
        for (const leg of this.byIp.values()) leg.close();
        this.byIp.clear();
        const msg = (e as Error).message;
        const why = /EADDRNOTAVAIL/.test(msg) ? "the address is not on this host" : msg;
        throw new LoadgenUsageError(
          `-t ui cannot send from ${ip} (${this.path} line ${line}, field ${this.field}): ${why}`,
        );
      }
    }
    return [...this.byIp.values()];
  }

  /** Call n's injection row and the socket of the IP in it (one row read serves both, also for RANDOM). */
  pick(callNumber: number): { leg: Leg; row: readonly string[] } {
    const row = this.injection.rowFor(callNumber);
    return { leg: this.byIp.get(row[this.field]!.trim())!, row };
  }
}
