import { AppError } from "../../core/index.ts";

/**
 * What a coordinator without a lake of its own (storage.lakehouse.enable false) answers where a
 * route truly needs one: 503 naming the reason (docs/ARCHITECTURE.md "A coordinator without a
 * lake"). Every read goes to coordinator.nodes there; only what writes into a lake is refused.
 */
export const noLakeError = (what: string) =>
  new AppError(
    "NO_LAKE",
    `${what} needs a lake of this process's own, and this coordinator has none (storage.lakehouse.enable is false): send it to a node that stores the rows`,
  );
