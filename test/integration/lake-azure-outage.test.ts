/**
 * The Azure Blob store (Azurite behind a TCP proxy) unreachable while a real `svc serve` ingests,
 * then back: /health's `lake:store` warns meanwhile, every accepted row lands in the container
 * exactly once (store-outage-helpers.ts). The judged run is 60 s:
 * `SVC_TEST_STORE_OUTAGE_SEC=60 bun test --timeout 300000 test/integration/lake-azure-outage.test.ts`
 * (figures in docs/BENCHMARKS.md "Object store outage").
 */
import { afterAll } from "bun:test";
import { openObjectStore } from "../../src/lake/store/index.ts";
import { peerTest, tempDir } from "../harness.ts";
import { AZURITE_PEER, type Azurite, startAzurite } from "../peers/azurite.ts";
import { STORE_OUTAGE_SEC, storeOutage } from "./store-outage-helpers.ts";

const NO_S3 = { region: "", access_key_id: "", secret_access_key: "" };
const tmp = tempDir("svc-azure-outage-");
let azurite: Azurite | undefined;
afterAll(async () => {
  await azurite?.[Symbol.asyncDispose]();
  await tmp[Symbol.asyncDispose]();
});

peerTest(
  `Azure Blob unreachable for ${STORE_OUTAGE_SEC} s while svc ingests: /health says so, rows spool locally, every accepted row lands once afterwards`,
  [AZURITE_PEER],
  async () => {
    azurite = await startAzurite(tmp.path);
    const a = azurite;
    const azure = (endpoint: string) => ({
      account_name: a.account,
      account_key: a.accountKey,
      connection_string: "",
      endpoint,
    });
    const dataPath = `az://${a.container}/outage/`;
    const url = new URL(a.endpoint);
    await storeOutage("lake-azure-outage", {
      port: Number(url.port),
      endpointAt: (port) => `http://127.0.0.1:${port}${url.pathname}`,
      lakehouse: (endpoint) => ({ data_path: dataPath, azure: azure(endpoint) }),
      direct: () => openObjectStore({ data_path: dataPath, s3: NO_S3, azure: azure(a.endpoint) }),
      // Three attempts per request: a swallowed upload fails after about 3 × 1 s.
      timeoutSec: 1,
    });
  },
  STORE_OUTAGE_SEC * 1000 + 240_000,
);
