/**
 * sipp (Debian `sip-tester`) with its built-in uac / uas scenarios, on loopback, as child processes.
 * -nostdin: no terminal in CI; -mp: a free media port so parallel runs do not fight over 6000.
 */
import { freeUdpPort, spawnPeer, waitUdpListening, type PeerProcess } from "./process.ts";

export async function startSippUas(dir: string, port: number, calls: number): Promise<PeerProcess> {
  const uas = spawnPeer(
    "sipp-uas",
    [
      "sipp",
      "-sn",
      "uas",
      "-i",
      "127.0.0.1",
      "-p",
      String(port),
      "-mp",
      String(await freeUdpPort()),
      "-m",
      String(calls),
      "-nostdin",
      "-timeout",
      "40s",
    ],
    { dir },
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
  return spawnPeer(
    "sipp-uac",
    [
      "sipp",
      "-sn",
      "uac",
      target,
      "-i",
      "127.0.0.1",
      "-p",
      String(port),
      "-mp",
      String(await freeUdpPort()),
      "-m",
      String(calls),
      "-r",
      String(rate),
      "-nostdin",
      "-timeout",
      "40s",
      "-timeout_error",
    ],
    { dir },
  );
}
