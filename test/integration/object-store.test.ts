/**
 * One contract, three object stores (docs/STORAGE.md "Object stores"): LocalStore on a temp
 * directory, S3Store on moto's S3 server, AzureBlobStore on Azurite. Small and multipart puts,
 * whole, ranged and streamed reads, head, prefix listing, deletes, a missing key, invalid keys, and
 * for the remote stores wrong credentials, a missing bucket and a store that is down: each an
 * AppError whose code says what to do and whose message names the key, never the secret.
 */
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { createHmac } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { AppError } from "../../src/core/index.ts";
import {
  DEV_ACCOUNT,
  openObjectStore,
  PART_SIZE,
  sharedKeyAuthorization,
  type ObjectStore,
  type ObjectStoreSettings,
} from "../../src/lake/store/index.ts";
import { peerTest, tempDir, type Peer } from "../harness.ts";
import { AZURITE_PEER, startAzurite } from "../peers/azurite.ts";
import { MOTO_PEER, startMoto } from "../peers/moto.ts";
import { freeTcpPort } from "../peers/slapd.ts";

const NO_S3 = { region: "", access_key_id: "", secret_access_key: "" };
const NO_AZURE = { account_name: "", account_key: "", connection_string: "", endpoint: "" };
/** The request time-out of the stores aimed at a server that never answers. */
const HUNG_TIMEOUT_MS = 300;
const WRONG_SECRET = "wrong-secret-Zq8xK2vLr9";
/** A valid base64 account key that is not the development account's. */
const WRONG_AZURE_KEY = Buffer.from("not the key of devstoreaccount1, 64 bytes long, padded.........").toString(
  "base64",
);

interface Fixture extends AsyncDisposable {
  store: ObjectStore;
  /** Secrets the messages must never show. */
  secrets: string[];
  /** The same store with a wrong secret, one whose bucket does not exist, one on a port nobody listens on. */
  wrongCredentials?: () => ObjectStore;
  missingBucket?: () => ObjectStore;
  down?: () => ObjectStore;
  /** The same store aimed at `endpoint`, with a request time-out of HUNG_TIMEOUT_MS. */
  at?: (endpoint: string) => ObjectStore;
  /** Azure: the store opened with an account SAS in the connection string, and with a forged one. */
  sas?: () => { good: ObjectStore; forged: ObjectStore; down: ObjectStore; secrets: string[] };
  /** How many parts the store committed for `key`, where it can tell. */
  parts?: (key: string) => Promise<number>;
}

/** One probe per peer and file (moto's spawns Python). */
const once = (p: Peer): Peer => {
  let v: boolean | undefined;
  return { install: p.install, probe: () => (v ??= p.probe()) };
};

async function thrown(p: Promise<unknown> | (() => Promise<unknown>)): Promise<AppError> {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    return e as AppError;
  }
  throw new Error("expected an AppError, nothing was thrown");
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const text = (s: string) => new TextEncoder().encode(s);

/** 20 MiB that differ at every 4 KiB, so a part out of place changes the bytes. */
function largeFile(dir: string): { path: string; bytes: Uint8Array } {
  const bytes = new Uint8Array(20 * 1024 * 1024);
  for (let i = 0; i < bytes.length; i += 4096) new DataView(bytes.buffer).setUint32(i, i);
  const path = join(dir, "large.parquet");
  writeFileSync(path, bytes);
  return { path, bytes };
}

function contract(name: string, peers: Peer[], setup: (dir: string) => Promise<Fixture>): void {
  describe(name, () => {
    const tmp = tempDir("svc-objstore-");
    const probes = peers.map(once);
    let fx: Fixture | undefined;
    beforeAll(async () => {
      if (probes.every((p) => p.probe())) fx = await setup(tmp.path);
    }, 120_000);
    afterAll(async () => {
      await fx?.[Symbol.asyncDispose]();
      await tmp[Symbol.asyncDispose]();
    });
    const t = (title: string, fn: (fx: Fixture) => Promise<void>) =>
      peerTest(`${name}: ${title}`, probes, () => fn(fx!), 120_000);
    /** Neither the message nor anything of the cause chain a log line could show holds a secret. */
    const noSecret = (f: Fixture, e: AppError) => {
      const shown: string[] = [JSON.stringify(e.details ?? {})];
      for (let c: unknown = e; c instanceof Error; c = c.cause) shown.push(c.message, JSON.stringify({ ...c }));
      for (const s of [...f.secrets, WRONG_SECRET, WRONG_AZURE_KEY]) expect(shown.join(" ")).not.toContain(s);
    };

    t("put, get, getRange, getStream and head of a small object", async ({ store }) => {
      await store.put("small/a.parquet", text("hello object store"));
      expect(new TextDecoder().decode(await store.get("small/a.parquet"))).toBe("hello object store");
      expect(new TextDecoder().decode(await store.getRange("small/a.parquet", 6, 6))).toBe("object");
      expect(new TextDecoder().decode(await store.getRange("small/a.parquet", 13, 100))).toBe("store"); // short at the end
      expect((await store.getRange("small/a.parquet", 500, 10)).length).toBe(0);
      expect(await new Response(await store.getStream("small/a.parquet")).text()).toBe("hello object store");
      const head = await store.head("small/a.parquet");
      expect(head?.size).toBe(18);
      expect(head?.etag).not.toBe("");
      await store.put("small/a.parquet", text("replaced"));
      expect(new TextDecoder().decode(await store.get("small/a.parquet"))).toBe("replaced");
      expect((await store.head("small/a.parquet"))?.etag).not.toBe(head?.etag);
    });

    t("a 20 MiB file goes up in parts and reads back byte for byte", async (f) => {
      const { path, bytes } = largeFile(tmp.path);
      await f.store.put("large/x.parquet", { file: path });
      expect((await f.store.head("large/x.parquet"))?.size).toBe(bytes.length);
      if (f.parts) expect(await f.parts("large/x.parquet")).toBe(Math.ceil(bytes.length / PART_SIZE));
      expect(Buffer.from(await f.store.get("large/x.parquet")).equals(Buffer.from(bytes))).toBe(true);
      // A range across the first part boundary.
      const range = await f.store.getRange("large/x.parquet", PART_SIZE - 10, 20);
      expect(Buffer.from(range).equals(Buffer.from(bytes.subarray(PART_SIZE - 10, PART_SIZE + 10)))).toBe(true);
      const streamed = await new Response(await f.store.getStream("large/x.parquet")).arrayBuffer();
      expect(Buffer.from(streamed).equals(Buffer.from(bytes))).toBe(true);
    });

    t("list returns every key under a prefix, in order, with sizes", async ({ store }) => {
      for (const k of [
        "lst/a/1.parquet",
        "lst/a/2.parquet",
        "lst/a/b/3.parquet",
        "lst/ab/4.parquet",
        "lst/b/5.parquet",
      ])
        await store.put(k, text(k));
      const under = await collect(store.list("lst/a/"));
      expect(under.map((o) => o.key)).toEqual(["lst/a/1.parquet", "lst/a/2.parquet", "lst/a/b/3.parquet"]);
      expect(under.map((o) => o.size)).toEqual([15, 15, 17]);
      for (const o of under) expect(Math.abs(o.lastModified.getTime() - Date.now())).toBeLessThan(3_600_000);
      expect((await collect(store.list("lst/a"))).map((o) => o.key)).toEqual([
        "lst/a/1.parquet",
        "lst/a/2.parquet",
        "lst/a/b/3.parquet",
        "lst/ab/4.parquet",
      ]);
      expect((await collect(store.list("lst/"))).length).toBe(5);
      expect(await collect(store.list("lst/none/"))).toEqual([]);
    });

    t("keys with blanks, reserved and non-ASCII characters round-trip", async ({ store }) => {
      const keys = ["odd/a b.parquet", "odd/ü-ß/日本.parquet", "odd/x+y=z&q;%20'.parquet"];
      for (const k of keys) await store.put(k, text(k));
      for (const k of keys) expect(new TextDecoder().decode(await store.get(k))).toBe(k);
      expect((await collect(store.list("odd/"))).map((o) => o.key).sort()).toEqual([...keys].sort());
      await store.deleteMany(keys);
      expect(await collect(store.list("odd/"))).toEqual([]);
    });

    t("delete and deleteMany remove objects; a missing one is no error", async ({ store }) => {
      for (const k of ["del/1", "del/2", "del/3"]) await store.put(k, text(k));
      await store.delete("del/1");
      expect(await store.head("del/1")).toBeUndefined();
      await store.delete("del/1");
      await store.deleteMany(["del/2", "del/3", "del/never"]);
      expect(await collect(store.list("del/"))).toEqual([]);
    });

    t("a missing key: head undefined, reads NOT_FOUND", async ({ store }) => {
      expect(await store.head("missing/x.parquet")).toBeUndefined();
      expect((await thrown(store.get("missing/x.parquet"))).code).toBe("NOT_FOUND");
      expect((await thrown(store.getRange("missing/x.parquet", 0, 10))).code).toBe("NOT_FOUND");
      expect((await thrown(store.getStream("missing/x.parquet"))).code).toBe("NOT_FOUND");
      expect((await thrown(store.put("missing/y", { file: join(tmp.path, "no-such-file") }))).code).toBe("NOT_FOUND");
    });

    t("keys that could leave the store's root are refused", async ({ store }) => {
      for (const k of ["../escape", "a/../../b", "/abs", "a//b", "a\\b", ""])
        expect((await thrown(store.put(k, text("x")))).code).toBe("BAD_REQUEST");
    });

    if (name !== "LocalStore") {
      t("wrong credentials: CONFIG_INVALID naming the keys, never the secret", async (f) => {
        const bad = f.wrongCredentials!();
        for (const p of [
          () => bad.put("small/b", text("x")),
          () => bad.get("small/a.parquet"),
          () => bad.head("small/a.parquet"),
          () => collect(bad.list("")),
        ]) {
          const e = await thrown(p);
          expect(e.code).toBe("CONFIG_INVALID");
          expect(e.message).toMatch(/storage\.lakehouse\.(s3\.secret_access_key|azure\.account_name with account_key)/);
          noSecret(f, e);
        }
      });

      t("a bucket or container that does not exist: CONFIG_INVALID naming data_path", async (f) => {
        const e = await thrown(f.missingBucket!().put("x", text("x")));
        expect(e.code).toBe("CONFIG_INVALID");
        expect(e.message).toContain("storage.lakehouse.data_path");
        noSecret(f, e);
      });

      if (name.startsWith("AzureBlobStore")) {
        t("a SAS connection string signs by query; a forged SAS or a store down shows no signature", async (f) => {
          const { good, forged, down, secrets } = f.sas!();
          await good.put("sas/a b.parquet", text("by sas"));
          expect(new TextDecoder().decode(await good.get("sas/a b.parquet"))).toBe("by sas");
          expect((await collect(good.list("sas/"))).map((o) => o.key)).toEqual(["sas/a b.parquet"]);
          await good.delete("sas/a b.parquet");
          const e = await thrown(() => forged.put("sas/x", text("x")));
          expect(e.code).toBe("CONFIG_INVALID");
          expect(e.message).toContain("connection_string");
          noSecret({ ...f, secrets: [...f.secrets, ...secrets] }, e);
          // Nothing answers: fetch's error names the URL, which holds the signature.
          const e2 = await thrown(() => down.put("sas/x", text("x")));
          expect(e2.code).toBe("UNAVAILABLE");
          noSecret({ ...f, secrets: [...f.secrets, ...secrets] }, e2);
        });
      }

      t("a store that accepts and never answers: UNAVAILABLE after the request time-out", async (f) => {
        const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
        try {
          const hung = f.at!(`http://127.0.0.1:${silent.port}`);
          for (const p of [
            () => hung.put("x", text("x")),
            () => hung.get("x"),
            () => hung.head("x"),
            () => collect(hung.list("")),
          ]) {
            const e = await thrown(p);
            expect(e.code).toBe("UNAVAILABLE");
            expect(e.message).toContain("endpoint");
            noSecret(f, e);
          }
        } finally {
          silent.stop(true);
        }
      });

      t("a store that is down: UNAVAILABLE naming the endpoint key", async (f) => {
        const down = f.down!();
        for (const p of [() => down.put("x", text("x")), () => down.head("x"), () => collect(down.list(""))]) {
          const e = await thrown(p);
          expect(e.code).toBe("UNAVAILABLE");
          expect(e.message).toContain("endpoint");
          noSecret(f, e);
        }
      });
    }
  });
}

contract("LocalStore", [], async (dir) => {
  const settings: ObjectStoreSettings = { data_path: join(dir, "lake"), s3: NO_S3, azure: NO_AZURE };
  return { store: openObjectStore(settings), secrets: [], [Symbol.asyncDispose]: async () => {} };
});

contract("S3Store on moto", [MOTO_PEER], async (dir) => {
  const moto = await startMoto(dir);
  const settings = (over: Partial<ObjectStoreSettings["s3"]> = {}, bucket = moto.bucket): ObjectStoreSettings => ({
    data_path: `s3://${bucket}/svc/lake/`,
    s3: {
      region: "us-east-1",
      access_key_id: moto.accessKeyId,
      secret_access_key: moto.secretAccessKey,
      endpoint: moto.endpoint,
      ...over,
    },
    azure: NO_AZURE,
  });
  // No AWS_* of the caller's shell leaks in: the environment is given explicitly.
  const open = (s: ObjectStoreSettings) => openObjectStore(s, {});
  return {
    store: open(settings()),
    secrets: [moto.secretAccessKey],
    wrongCredentials: () => open(settings({ secret_access_key: WRONG_SECRET })),
    missingBucket: () => open(settings({}, "no-such-bucket")),
    down: () => open(settings({ endpoint: `http://127.0.0.1:${freeTcpPort()}` })),
    at: (endpoint) => openObjectStore(settings({ endpoint }), {}, { requestTimeoutMs: HUNG_TIMEOUT_MS }),
    parts: async (key) => Number(/-(\d+)$/.exec((await open(settings()).head(key))?.etag ?? "")?.[1] ?? 1),
    [Symbol.asyncDispose]: () => moto[Symbol.asyncDispose](),
  };
});

contract("AzureBlobStore on Azurite", [AZURITE_PEER], async (dir) => {
  const az = await startAzurite(dir);
  const connection = (key: string, endpoint = az.endpoint) =>
    `DefaultEndpointsProtocol=http;AccountName=${az.account};AccountKey=${key};BlobEndpoint=${endpoint};`;
  const settings = (azure: Partial<ObjectStoreSettings["azure"]>, container = az.container): ObjectStoreSettings => ({
    data_path: `az://${container}/svc/lake/`,
    s3: NO_S3,
    azure: { ...NO_AZURE, ...azure },
  });
  return {
    // account_name + account_key + endpoint here; the connection string in the other cases.
    store: openObjectStore(settings({ account_name: az.account, account_key: az.accountKey, endpoint: az.endpoint })),
    secrets: [az.accountKey],
    wrongCredentials: () => openObjectStore(settings({ connection_string: connection(WRONG_AZURE_KEY) })),
    missingBucket: () =>
      openObjectStore(settings({ connection_string: connection(az.accountKey) }, "no-such-container")),
    down: () =>
      openObjectStore(
        settings({ connection_string: connection(az.accountKey, `http://127.0.0.1:${freeTcpPort()}/${DEV_ACCOUNT}`) }),
      ),
    at: (endpoint) =>
      openObjectStore(
        settings({ connection_string: connection(az.accountKey, `${endpoint}/${DEV_ACCOUNT}`) }),
        {},
        { requestTimeoutMs: HUNG_TIMEOUT_MS },
      ),
    sas: () => {
      // An account SAS (Blob service, string to sign of version 2020-12-06 and later).
      const expiry = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, "Z");
      const fields = { sv: "2023-11-03", ss: "b", srt: "sco", sp: "rwdlc", se: expiry, spr: "https,http" };
      const toSign = [
        az.account,
        fields.sp,
        fields.ss,
        fields.srt,
        "",
        fields.se,
        "",
        fields.spr,
        fields.sv,
        "",
        "",
      ].join("\n");
      const sig = createHmac("sha256", Buffer.from(az.accountKey, "base64")).update(toSign).digest("base64");
      const forgedSig = createHmac("sha256", Buffer.from(WRONG_AZURE_KEY, "base64")).update(toSign).digest("base64");
      const sas = (signature: string) => new URLSearchParams({ ...fields, sig: signature }).toString();
      const open = (signature: string, endpoint = az.endpoint) =>
        openObjectStore(
          settings({ connection_string: `BlobEndpoint=${endpoint};SharedAccessSignature=${sas(signature)}` }),
        );
      const downEndpoint = `http://127.0.0.1:${freeTcpPort()}/${DEV_ACCOUNT}`;
      return {
        good: open(sig),
        forged: open(forgedSig),
        down: open(sig, downEndpoint),
        secrets: [sig, forgedSig, encodeURIComponent(sig), encodeURIComponent(forgedSig)],
      };
    },
    parts: async (key) => {
      const url = new URL(`${az.endpoint}/${az.container}/svc/lake/${key}?comp=blocklist&blocklisttype=committed`);
      const headers: Record<string, string> = { "x-ms-date": new Date().toUTCString(), "x-ms-version": "2023-11-03" };
      headers.authorization = sharedKeyAuthorization(
        az.account,
        Buffer.from(az.accountKey, "base64"),
        "GET",
        url,
        headers,
      );
      const xml = await (await fetch(url, { headers })).text();
      return [...xml.matchAll(/<Block>/g)].length;
    },
    [Symbol.asyncDispose]: () => az[Symbol.asyncDispose](),
  };
});
