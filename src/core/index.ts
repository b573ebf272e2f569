export * from "./errors.ts";
export * from "./result.ts";
export * from "./log.ts";
export * from "./metrics.ts";
export * from "./lifecycle.ts";
export * from "./startup.ts";
export * from "./net.ts";
export * from "./ip.ts";
export * from "./time.ts";
export * from "./version.ts";
export * from "./table.ts";
export * from "./csv-batch.ts";
export * from "./column-batch.ts";
export * from "./spool-batch.ts";
export { footer, PARQUET_MAGIC, type ChunkMeta, type ParquetColumn, type RowGroupMeta } from "./parquet/encode.ts";
export {
  FILE_BLOOM_KEY,
  PAGE_BLOOM_KEY,
  repageParquet,
  type RepageOptions,
  type RepageStats,
} from "./parquet/repage.ts";
export { repageInWorker } from "./parquet/repage-host.ts";
export { sbbfBlock, sbbfMask } from "./parquet/bloom-write.ts";
export {
  CODEC_NONE,
  CODEC_ZSTD,
  bitLevels,
  levelRanks,
  decodeHybrid,
  decompressPage,
  u32le,
  ENC_PLAIN,
  ENC_PLAIN_DICTIONARY,
  ENC_RLE_DICTIONARY,
  PAGE_DATA,
  PAGE_DICTIONARY,
  preadExact,
} from "./parquet/read.ts";
export {
  intField,
  listField,
  readThriftStruct,
  structField,
  type ThriftStruct,
  type ThriftValue,
} from "./parquet/thrift-tree.ts";
export { ThriftScan } from "./parquet/thrift-scan.ts";
export * from "./time-buckets.ts";
export * from "./e-model.ts";
export * from "./tls-files.ts";
export * from "./test-pause.ts";
export { libc, type Libc, threadCpuSeconds, willNeed } from "./libc.ts";
