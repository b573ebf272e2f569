import { expect, test } from "bun:test";
import { AppError } from "../../core/index.ts";
import { resolveS3Endpoint } from "./s3-store.ts";

const S = { region: "", access_key_id: "", secret_access_key: "", endpoint: "" };

test("the endpoint key wins, then AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL; none = AWS", () => {
  const env = { AWS_ENDPOINT_URL: "http://127.0.0.1:9000", AWS_ENDPOINT_URL_S3: "http://127.0.0.1:9001/" };
  expect(resolveS3Endpoint({ ...S, endpoint: "https://s3.example.com/" }, env)).toBe("https://s3.example.com");
  expect(resolveS3Endpoint(S, env)).toBe("http://127.0.0.1:9001");
  expect(resolveS3Endpoint(S, { AWS_ENDPOINT_URL: "http://127.0.0.1:9000" })).toBe("http://127.0.0.1:9000");
  expect(resolveS3Endpoint(S, {})).toBeUndefined();
});

test("an endpoint without a scheme, or with credentials in it, is refused naming where it came from", () => {
  for (const [endpoint, env, where] of [
    ["127.0.0.1:9000", {}, "storage.lakehouse.s3.endpoint"],
    ["", { AWS_ENDPOINT_URL: "minio:9000" }, "AWS_ENDPOINT_URL"],
    ["ftp://h/", {}, "the scheme must be http or https"],
    ["https://user:pw@h/", {}, "no credentials"],
  ] as const) {
    let err: unknown;
    try {
      resolveS3Endpoint({ ...S, endpoint }, env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe("CONFIG_INVALID");
    expect((err as AppError).message).toContain(where);
    expect((err as AppError).message).not.toContain("pw@");
  }
});
