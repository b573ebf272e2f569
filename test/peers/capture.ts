/**
 * Ground truth from the wire: tshark capturing on the loopback interface while peers talk.
 *
 * Capturing needs root or dumpcap with CAP_NET_RAW + CAP_NET_ADMIN (Debian asks at install time).
 * `LO_CAPTURE` is a test peer like a missing program: skipped with one line, failed under
 * SVC_TEST_REQUIRE_PEERS=1.
 *
 * Completeness: dumpcap flushes its file on its own schedule, and stopping it right after the last
 * packet can lose what is still in the kernel ring. So the filter also admits a sentinel port; after
 * the traffic we send datagrams there until one shows up in the file. Loopback delivers to the
 * capture socket in order, so everything sent before the sentinel is in the file by then.
 */
import { join } from "node:path";
import type { Peer } from "../harness.ts";
import { waitFor } from "../harness.ts";
import { spawnPeer, type PeerProcess } from "./process.ts";

let loCaptureOk: boolean | undefined;

/** Opens lo for capture once (`dumpcap -L` activates the device, which is what needs permission). */
function canCaptureOnLo(): boolean {
  if (loCaptureOk !== undefined) return loCaptureOk;
  try {
    loCaptureOk = Bun.spawnSync(["dumpcap", "-L", "-i", "lo"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
  } catch {
    loCaptureOk = false; // no dumpcap at all
  }
  return loCaptureOk;
}

export const LO_CAPTURE: Peer = {
  install:
    "permission to capture on lo (run as root, or apt-get install tshark and setcap cap_net_raw,cap_net_admin+eip /usr/bin/dumpcap)",
  probe: canCaptureOnLo,
};

export interface LoCapture extends AsyncDisposable {
  path: string;
  /** Makes sure every packet sent so far is in the file, then stops tshark. */
  finish(): Promise<string>;
}

/** Starts `tshark -i lo -f "<bpf> or udp port <sentinel>" -w <dir>/<name>.pcap`; resolves once capturing. */
export async function captureLo(dir: string, name: string, bpf: string): Promise<LoCapture> {
  const path = join(dir, `${name}.pcap`);
  // The sentinel port has a socket of ours bound, so sending there never draws ICMP unreachable.
  const sink = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0 });
  const sentinel = sink.port;
  // -F pcap: classic format, like the pcaps the rest of the suite reads; -n: no name resolution.
  const tshark: PeerProcess = spawnPeer(
    `tshark-${name}`,
    ["tshark", "-n", "-i", "lo", "-f", `(${bpf}) or udp port ${sentinel}`, "-F", "pcap", "-w", path],
    { dir },
  );
  // tshark logs "Capture started." when dumpcap reports its output file, which it opens only after the
  // device is active with the filter set.
  try {
    await waitFor(`tshark capturing on lo (${bpf})`, () => {
      if (tshark.proc.exitCode !== null) throw new Error(`tshark exited ${tshark.proc.exitCode}: ${tshark.output()}`);
      return tshark.output().includes("Capture started");
    });
  } catch (e) {
    sink.close();
    await tshark.stop();
    throw e;
  }
  let done = false;
  const finish = async () => {
    if (done) return path;
    done = true;
    const udp = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0 });
    try {
      await waitFor(
        "sentinel datagram in the capture file",
        () => {
          udp.send("svc-capture-sentinel", sentinel, "127.0.0.1");
          const r = Bun.spawnSync(
            ["tshark", "-n", "-r", path, "-Y", `udp.dstport == ${sentinel}`, "-T", "fields", "-e", "frame.number"],
            { stdout: "pipe", stderr: "ignore" },
          );
          return r.stdout.toString().trim() !== "";
        },
        15_000,
        200,
      );
    } finally {
      udp.close();
      sink.close();
    }
    const code = await tshark.stop("SIGINT");
    if (code !== 0) throw new Error(`tshark capture ended with ${code}: ${tshark.output()}`);
    return path;
  };
  return {
    path,
    finish,
    async [Symbol.asyncDispose]() {
      sink.close();
      await tshark.stop("SIGINT");
    },
  };
}

/** Frames in a capture matching a display filter (tshark's count, for "what went over the wire"). */
export function countFrames(path: string, displayFilter: string): number {
  const r = Bun.spawnSync(["tshark", "-n", "-r", path, "-Y", displayFilter, "-T", "fields", "-e", "frame.number"], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`tshark -r ${path} -Y '${displayFilter}' failed: ${r.stderr.toString()}`);
  return r.stdout
    .toString()
    .split("\n")
    .filter((l) => l.trim() !== "").length;
}
