import { expect, test } from "bun:test";
import { publicDataPath } from "./node-app.ts";

test.each([
  ["/var/lib/svc/lake/", "lake/"],
  ["/tmp/svc-test-x/lake", "lake/"],
  ["./data/lake/", "lake/"],
  ["C:\\svc\\lake\\", "lake/"],
  ["s3://bucket/prefix/deep/", "s3://bucket/"],
  ["az://container/p/", "az://container/"],
  ["/", ""],
])("publicDataPath(%p) = %p: no directory above the lake's own", (path, shown) => {
  expect(publicDataPath(path)).toBe(shown);
});
