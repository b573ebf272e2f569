import { describe, expect, test } from "bun:test";
import { AppError } from "../../core/index.ts";
import { DEV_ACCOUNT_KEY, parseConnectionString, resolveAzureTarget, sharedKeyAuthorization } from "./azure-auth.ts";

const NONE = { account_name: "", account_key: "", connection_string: "", endpoint: "" };
const KEY = Buffer.from("0123456789abcdef0123456789abcdef").toString("base64");

function refused(fn: () => unknown): AppError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    return e as AppError;
  }
  throw new Error("expected an AppError");
}

describe("Azure connection strings", () => {
  test("values may hold '=', names are case-insensitive", () => {
    const cs = parseConnectionString(`DefaultEndpointsProtocol=https;ACCOUNTNAME=acct;AccountKey=${KEY};`);
    expect(cs.get("accountname")).toBe("acct");
    expect(cs.get("accountkey")).toBe(KEY);
  });

  test("AccountName and AccountKey give the public endpoint with the protocol asked for", () => {
    const t = resolveAzureTarget({
      ...NONE,
      connection_string: `DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=${KEY};EndpointSuffix=core.chinacloudapi.cn`,
    });
    expect(t.endpoint).toBe("http://acct.blob.core.chinacloudapi.cn");
    expect(t.auth).toMatchObject({ kind: "shared-key", account: "acct" });
  });

  test("BlobEndpoint wins over the derived endpoint; UseDevelopmentStorage means Azurite's account", () => {
    expect(
      resolveAzureTarget({
        ...NONE,
        connection_string: `AccountName=acct;AccountKey=${KEY};BlobEndpoint=https://blob.example.net/`,
      }).endpoint,
    ).toBe("https://blob.example.net");
    const dev = resolveAzureTarget({ ...NONE, connection_string: "UseDevelopmentStorage=true" });
    expect(dev.endpoint).toBe("http://127.0.0.1:10000/devstoreaccount1");
    expect(dev.auth).toMatchObject({
      kind: "shared-key",
      account: "devstoreaccount1",
      key: Buffer.from(DEV_ACCOUNT_KEY, "base64"),
    });
  });

  test("the connection string wins over account_key; endpoint wins over BlobEndpoint", () => {
    const t = resolveAzureTarget({
      account_name: "other",
      account_key: KEY,
      endpoint: "http://127.0.0.1:10000/acct",
      connection_string: `AccountName=acct;AccountKey=${KEY}`,
    });
    expect(t).toMatchObject({ endpoint: "http://127.0.0.1:10000/acct", auth: { account: "acct" } });
  });

  test("a SAS in the connection string signs by query", () => {
    expect(
      resolveAzureTarget({
        ...NONE,
        connection_string: "BlobEndpoint=https://acct.blob.core.windows.net;SharedAccessSignature=?sv=2022&sig=abc",
      }).auth,
    ).toEqual({
      kind: "sas",
      account: "acct",
      query: "sv=2022&sig=abc",
    });
  });

  test("bad settings name the key and never show the key's value", () => {
    const cases: Array<[Parameters<typeof resolveAzureTarget>[0], string]> = [
      [NONE, "storage.lakehouse.azure: set account_name with account_key, or connection_string"],
      [
        { ...NONE, account_key: KEY },
        "storage.lakehouse.azure.account_key is set without storage.lakehouse.azure.account_name",
      ],
      [
        { ...NONE, account_name: "acct", account_key: "not base64!!" },
        "storage.lakehouse.azure.account_key is not base64",
      ],
      [{ ...NONE, connection_string: "AccountName=acct" }, "has neither AccountKey nor SharedAccessSignature"],
      [
        { ...NONE, connection_string: `AccountName=acct;AccountKey=${KEY};BlobEndpoint=localhost:10000` },
        "BlobEndpoint",
      ],
      [
        { ...NONE, account_name: "acct", account_key: KEY, endpoint: "127.0.0.1:10000" },
        "storage.lakehouse.azure.endpoint",
      ],
      [{ ...NONE, account_name: "Bad_Name", account_key: KEY }, "storage.lakehouse.azure.account_name"],
      [
        { ...NONE, connection_string: `AccountName=acct;${KEY.replace(/=+$/, "")}` },
        "part 2 (between semicolons) is not Name=value",
      ],
    ];
    for (const [settings, want] of cases) {
      const e = refused(() => resolveAzureTarget(settings));
      expect(e.code).toBe("CONFIG_INVALID");
      expect(e.message).toContain(want);
      expect(e.message).not.toContain(KEY.slice(0, 12));
      expect(e.message).not.toContain("not base64!!");
    }
  });
});

describe("Shared Key signature", () => {
  test("signs the canonical string: standard headers, sorted x-ms-*, resource with sorted query", () => {
    const url = new URL("http://127.0.0.1:10000/devstoreaccount1/lake?restype=container&comp=list&prefix=a%2Fb");
    const headers = {
      "x-ms-version": "2023-11-03",
      "x-ms-date": "Sun, 29 Nov 2026 00:00:00 GMT",
      "content-length": "0",
    };
    const key = Buffer.from(KEY, "base64");
    const toSign =
      "GET\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:Sun, 29 Nov 2026 00:00:00 GMT\nx-ms-version:2023-11-03\n/devstoreaccount1/devstoreaccount1/lake\ncomp:list\nprefix:a/b\nrestype:container";
    const want = `SharedKey devstoreaccount1:${new Bun.CryptoHasher("sha256", key).update(toSign).digest("base64")}`;
    expect(sharedKeyAuthorization("devstoreaccount1", key, "GET", url, headers)).toBe(want);
    // A length other than 0 is part of the string to sign.
    expect(sharedKeyAuthorization("devstoreaccount1", key, "GET", url, { ...headers, "content-length": "5" })).not.toBe(
      want,
    );
  });
});
