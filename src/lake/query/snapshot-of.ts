import { AppError } from "../../core/index.ts";
import type { LakeCatalog } from "../catalog-port.ts";
import type { TimeTravelRef } from "./time-travel.ts";

/** The snapshot a time-travel clause names: `VERSION => n` as given, `TIMESTAMP => '…'` the newest at or before it (UTC unless an offset is given). */
export async function snapshotOf(
  ref: TimeTravelRef,
  catalog: Pick<LakeCatalog, "currentSnapshotId" | "snapshotAt">,
): Promise<number> {
  if (ref.kind === "version") {
    const snapshotId = Number(ref.value);
    if (!Number.isInteger(snapshotId) || snapshotId < 0)
      throw new AppError("BAD_REQUEST", `time travel: "${ref.value}" is not a snapshot id`);
    if (snapshotId > (await catalog.currentSnapshotId()))
      throw new AppError("NOT_FOUND", `time travel: snapshot ${snapshotId} does not exist`);
    return snapshotId;
  }
  const ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(ref.value) ? ref.value : `${ref.value.replace(" ", "T")}Z`);
  if (Number.isNaN(ms)) throw new AppError("BAD_REQUEST", `time travel: "${ref.value}" is not a timestamp`);
  const snapshotId = await catalog.snapshotAt(ms);
  if (snapshotId === undefined) throw new AppError("NOT_FOUND", `time travel: no snapshot at or before ${ref.value}`);
  return snapshotId;
}
