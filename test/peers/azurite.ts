/**
 * Azurite's blob service as the Azure Blob test peer (docs/STORAGE.md "Test peers"): the
 * `azurite-blob` that scripts/node-peers.sh installs (or SVC_AZURITE_BLOB, a path to one) on a
 * free loopback port, in memory, with its working directory in the test's temp dir. It checks
 * Shared Key signatures of the development account, so a wrong key is refused as Azure refuses it.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { DEV_ACCOUNT, DEV_ACCOUNT_KEY, sharedKeyAuthorization } from "../../src/lake/store/index.ts";
import { waitFor, type Peer } from "../harness.ts";
import { spawnPeer, type PeerProcess } from "./process.ts";
import { freeTcpPort } from "./slapd.ts";

/** SVC_AZURITE_BLOB, else the install of scripts/node-peers.sh (same SVC_NODE_PEERS default as the script). */
const azuriteBlob = () =>
  process.env.SVC_AZURITE_BLOB ??
  join(process.env.SVC_NODE_PEERS ?? join(homedir(), ".cache/svc/node-peers"), "node_modules/.bin/azurite-blob");

export const AZURITE_PEER: Peer = {
  install: "run scripts/node-peers.sh (npm: azurite@3.37.0) and have node on PATH",
  probe: () => existsSync(azuriteBlob()) && Bun.which("node") !== null,
};

export interface Azurite extends AsyncDisposable {
  /** Blob endpoint of the development account: `http://127.0.0.1:<port>/devstoreaccount1`. */
  endpoint: string;
  account: string;
  accountKey: string;
  container: string;
  proc: PeerProcess;
}

export async function startAzurite(dir: string, container = "svc-lake"): Promise<Azurite> {
  const port = freeTcpPort();
  const endpoint = `http://127.0.0.1:${port}/${DEV_ACCOUNT}`;
  const proc = spawnPeer(
    "azurite",
    [
      azuriteBlob(),
      "--blobHost",
      "127.0.0.1",
      "--blobPort",
      String(port),
      "--inMemoryPersistence",
      "--skipApiVersionCheck",
    ],
    { dir },
  );
  try {
    await waitFor(
      `azurite listening on ${endpoint}`,
      async () => {
        if (proc.proc.exitCode !== null)
          throw new Error(`azurite exited with ${proc.proc.exitCode}: ${proc.output().slice(-2000)}`);
        await fetch(`http://127.0.0.1:${port}/`);
        return true;
      },
      60_000,
    );
    const url = new URL(`${endpoint}/${container}?restype=container`);
    const headers: Record<string, string> = {
      "x-ms-date": new Date().toUTCString(),
      "x-ms-version": "2023-11-03",
      "content-length": "0",
    };
    headers.authorization = sharedKeyAuthorization(
      DEV_ACCOUNT,
      Buffer.from(DEV_ACCOUNT_KEY, "base64"),
      "PUT",
      url,
      headers,
    );
    const res = await fetch(url, { method: "PUT", headers });
    if (res.status !== 201) throw new Error(`azurite: create container answered ${res.status}: ${await res.text()}`);
    return {
      endpoint,
      account: DEV_ACCOUNT,
      accountKey: DEV_ACCOUNT_KEY,
      container,
      proc,
      [Symbol.asyncDispose]: async () => void (await proc.stop()),
    };
  } catch (e) {
    await proc.stop();
    throw e;
  }
}
