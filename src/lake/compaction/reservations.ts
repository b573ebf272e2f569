/**
 * The path reservations of an abandoned merge (docs/DUCKLAKE.md "PostgreSQL catalog"): every merged
 * file's path is reserved when the merge starts and the reservation is removed by the catalog
 * commit. A merge that fails, is stopped by the shutdown or is rolled back deletes its files, and
 * forgets their reservations here; left behind, they would wait for this writer's next start.
 */
import { errorMessage, type Logger } from "../../core/index.ts";
import type { LakeCatalog } from "../catalog-port.ts";

/** Forgets this writer's reservations of `paths`; a catalog that cannot is left to the next start's sweep. */
export async function forgetReservations(
  catalog: Pick<LakeCatalog, "forgetInflight">,
  logger: Logger,
  paths: readonly string[],
): Promise<void> {
  if (paths.length === 0) return;
  try {
    await catalog.forgetInflight(paths);
  } catch (e) {
    logger.warn("could not forget the reservations of an abandoned merge; the next start does", {
      files: paths.length,
      error: errorMessage(e),
    });
  }
}
