/**
 * The S3 store (moto behind a TCP proxy) unreachable while a real `svc serve` ingests, then back:
 * /health's `lake:store` warns meanwhile, every accepted row lands in the bucket exactly once
 * (store-outage-helpers.ts). The judged run is 60 s:
 * `SVC_TEST_STORE_OUTAGE_SEC=60 bun test --timeout 300000 test/integration/lake-s3-outage.test.ts`
 * (figures in docs/BENCHMARKS.md "Object store outage").
 */
import { afterAll } from "bun:test";
import { openObjectStore } from "../../src/lake/store/index.ts";
import { peerTest, tempDir } from "../harness.ts";
import { MOTO_PEER, type Moto, startMoto } from "../peers/moto.ts";
import { STORE_OUTAGE_SEC, storeOutage } from "./store-outage-helpers.ts";

const NO_AZURE = { account_name: "", account_key: "", connection_string: "", endpoint: "" };
const tmp = tempDir("svc-s3-outage-");
let moto: Moto | undefined;
afterAll(async () => {
  await moto?.[Symbol.asyncDispose]();
  await tmp[Symbol.asyncDispose]();
});

peerTest(
  `S3 unreachable for ${STORE_OUTAGE_SEC} s while svc ingests: /health says so, rows spool locally, every accepted row lands once afterwards`,
  [MOTO_PEER],
  async () => {
    moto = await startMoto(tmp.path);
    const m = moto;
    const s3 = (endpoint: string) => ({
      endpoint,
      region: "us-east-1",
      access_key_id: m.accessKeyId,
      secret_access_key: m.secretAccessKey,
    });
    const dataPath = `s3://${m.bucket}/outage/`;
    await storeOutage("lake-s3-outage", {
      port: Number(new URL(m.endpoint).port),
      endpointAt: (port) => `http://127.0.0.1:${port}`,
      lakehouse: (endpoint) => ({ data_path: dataPath, s3: s3(endpoint) }),
      direct: () => openObjectStore({ data_path: dataPath, s3: s3(m.endpoint), azure: NO_AZURE }),
    });
  },
  STORE_OUTAGE_SEC * 1000 + 240_000,
);
