/**
 * storage.lakehouse.data_path: a local directory, `s3://<bucket>/<prefix>/` or
 * `az://<container>/<prefix>/` (docs/STORAGE.md "Object stores"). Pure: no I/O.
 */
import { AppError } from "../../core/index.ts";

export type DataPath =
  | { kind: "local"; path: string }
  | { kind: "s3"; bucket: string; prefix: string }
  | { kind: "azure"; container: string; prefix: string };

const KEY = "storage.lakehouse.data_path";

/** S3 bucket names: 3-63 of a-z 0-9 . -, starting and ending with a letter or digit. */
const S3_BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** Azure container names: 3-63 of a-z 0-9 -, no "--", starting and ending with a letter or digit. */
const AZ_CONTAINER = /^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){2,62}$/;

const invalid = (value: string, why: string) =>
  new AppError("CONFIG_INVALID", `${KEY} ${JSON.stringify(value)}: ${why}`);

/**
 * Splits data_path into its kind, bucket or container and key prefix. The prefix is "" or ends in
 * "/" (`s3://b/lake` and `s3://b/lake/` are the same place); every other scheme is refused.
 */
export function parseDataPath(value: string): DataPath {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(value)?.[1];
  if (scheme === undefined) {
    if (value.trim() === "")
      throw invalid(value, "empty; set a local directory, s3://<bucket>/<prefix>/ or az://<container>/<prefix>/");
    return { kind: "local", path: value };
  }
  const kind = scheme.toLowerCase() === "s3" ? "s3" : scheme.toLowerCase() === "az" ? "azure" : undefined;
  if (kind === undefined)
    throw invalid(
      value,
      `unknown scheme "${scheme}://"; use a local directory, s3://<bucket>/<prefix>/ or az://<container>/<prefix>/`,
    );
  const rest = value.slice(scheme.length + 3);
  if (/[?#\\]/.test(rest) || /\s/.test(rest)) throw invalid(value, "no query, fragment, backslash or blank is allowed");
  const slash = rest.indexOf("/");
  const name = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? "" : rest.slice(slash + 1);
  const what = kind === "s3" ? "bucket" : "container";
  if (name === "") throw invalid(value, `no ${what} name after ${scheme}://`);
  if (kind === "s3" && (!S3_BUCKET.test(name) || name.includes("..")))
    throw invalid(value, `"${name}" is not an S3 bucket name (3-63 of a-z 0-9 . -)`);
  if (kind === "azure" && !AZ_CONTAINER.test(name))
    throw invalid(value, `"${name}" is not an Azure container name (3-63 of a-z 0-9 -, no "--")`);
  const segments = path.split("/").filter((s, i, all) => !(s === "" && i === all.length - 1));
  if (segments.some((s) => s === "" || s === "." || s === ".."))
    throw invalid(value, 'the prefix has an empty, "." or ".." segment');
  const prefix = segments.length === 0 ? "" : `${segments.join("/")}/`;
  return kind === "s3" ? { kind, bucket: name, prefix } : { kind, container: name, prefix };
}
