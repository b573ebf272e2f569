/**
 * sipp (Debian `sip-tester`) with its built-in uac / uas scenarios, on loopback, as child processes.
 * -nostdin: no terminal in CI; -mp: a free media port so parallel runs do not fight over 6000.
 */
import { waitFor } from "../harness.ts";
import { freePort, spawnPeer, udpBound, waitUdpListening, type PeerProcess } from "./process.ts";

/**
 * sipp binds its media port and the one two above it (audio and video RTP) at start, and exits with
 * 254 when either is taken ("Unable to bind video RTP socket"): both are picked free, and a start
 * that lost either to another process since is tried again with others, up to three times.
 */
async function startSipp(name: string, args: string[], dir: string): Promise<PeerProcess> {
  for (let attempt = 1; ; attempt++) {
    let media = freePort();
    while (udpBound(media + 2)) media = freePort();
    const peer = spawnPeer(name, ["sipp", ...args, "-mp", String(media)], { dir });
    // Both media sockets bound, or sipp gone (a caller may also finish quickly and exit 0).
    await waitFor(`${name} binding its media ports`, () => peer.proc.exitCode !== null || udpBound(media + 2), 10_000);
    if (peer.proc.exitCode !== 254 || !/Unable to bind \w+ RTP socket/.test(peer.output()) || attempt === 3)
      return peer;
    await peer.stop();
  }
}

export async function startSippUas(dir: string, port: number, calls: number): Promise<PeerProcess> {
  const uas = await startSipp(
    "sipp-uas",
    ["-sn", "uas", "-i", "127.0.0.1", "-p", String(port), "-m", String(calls), "-nostdin", "-timeout", "40s"],
    dir,
  );
  await waitUdpListening(uas, port);
  return uas;
}

/** `calls` calls at `rate` per second towards `target` ("127.0.0.1:5060"); exits 0 when all succeed. */
export async function startSippUac(
  dir: string,
  port: number,
  target: string,
  calls: number,
  rate: number,
): Promise<PeerProcess> {
  return startSipp(
    "sipp-uac",
    [
      "-sn",
      "uac",
      target,
      "-i",
      "127.0.0.1",
      "-p",
      String(port),
      "-m",
      String(calls),
      "-r",
      String(rate),
      "-nostdin",
      "-timeout",
      "40s",
      "-timeout_error",
    ],
    dir,
  );
}
