import { describe, expect, test } from "bun:test";
import { AppError } from "../../core/index.ts";
import { parseDataPath } from "./data-path.ts";

describe("parseDataPath", () => {
  test("local paths stay as they are", () => {
    expect(parseDataPath("./data/lake/")).toEqual({ kind: "local", path: "./data/lake/" });
    expect(parseDataPath("/var/lib/svc/lake")).toEqual({ kind: "local", path: "/var/lib/svc/lake" });
  });

  test("s3 and az URIs give bucket or container and a prefix ending in /", () => {
    expect(parseDataPath("s3://lake-bucket/svc/prod/")).toEqual({
      kind: "s3",
      bucket: "lake-bucket",
      prefix: "svc/prod/",
    });
    expect(parseDataPath("s3://lake-bucket/svc/prod")).toEqual({
      kind: "s3",
      bucket: "lake-bucket",
      prefix: "svc/prod/",
    });
    expect(parseDataPath("s3://lake.bucket")).toEqual({ kind: "s3", bucket: "lake.bucket", prefix: "" });
    expect(parseDataPath("S3://lake-bucket/")).toEqual({ kind: "s3", bucket: "lake-bucket", prefix: "" });
    expect(parseDataPath("az://lake/a/b/")).toEqual({ kind: "azure", container: "lake", prefix: "a/b/" });
  });

  const refused: Array<[string, string]> = [
    ["", "empty"],
    ["gs://bucket/x/", 'unknown scheme "gs://"'],
    ["s3:///x/", "no bucket name"],
    ["s3://Bad_Bucket/x/", "is not an S3 bucket name"],
    ["s3://ab/x/", "is not an S3 bucket name"],
    ["az://bad--name/", "is not an Azure container name"],
    ["az://Lake/", "is not an Azure container name"],
    ["s3://bucket/a//b/", "empty"],
    ["s3://bucket/a/../b/", '".."'],
    ["s3://bucket/a?x=1", "no query"],
  ];
  for (const [value, why] of refused) {
    test(`refuses ${JSON.stringify(value)} naming the key`, () => {
      let err: unknown;
      try {
        parseDataPath(value);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe("CONFIG_INVALID");
      expect((err as AppError).message).toContain("storage.lakehouse.data_path");
      expect((err as AppError).message).toContain(why);
    });
  }
});
