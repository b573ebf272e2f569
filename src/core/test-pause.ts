/**
 * Named pause points in real code paths, for the kill -9 tests only (docs/ARCHITECTURE.md
 * "Durability: what a crash can lose", "Pause points for kill -9 tests"). With
 * `SVC_TEST_PAUSE_AT=<point>` in the environment, the first arrival at `<point>` writes one JSON
 * line `{"level":"warn","msg":"test pause","point":"<point>"}` on stderr and never resolves, so a
 * test kills the process exactly there; later arrivals pass. Without the variable (every real
 * deployment: loadConfig ignores SVC_TEST_*) `testPause` returns undefined and the caller's
 * `await` costs one microtask. No other behaviour changes.
 */
const PAUSE_AT = process.env.SVC_TEST_PAUSE_AT;
let paused = false;

/** The points, each in the code path it names (checked by the tests that use them). */
export type TestPausePoint =
  /** lake writer: the flush's Parquet files are in the object store, reserved, not committed. */
  | "flush:uploaded"
  /** PostgreSQL catalog: a commit's rows are all written, its transaction still open. */
  | "commit:before-commit"
  /** lake writer: the catalog committed the flush, the buffer still holds its spool files. */
  | "flush:committed";

export function testPause(point: TestPausePoint): Promise<void> | undefined {
  if (PAUSE_AT !== point || paused) return undefined;
  paused = true;
  process.stderr.write(`${JSON.stringify({ level: "warn", msg: "test pause", point })}\n`);
  return new Promise<void>(() => {});
}
