import { describe, expect, test } from "bun:test";
import { AppError } from "../core/index.ts";
import { DEFAULT_TRANSACTION_RANGE, normalizeTransactionRange, validateExportTransaction } from "./user-settings.ts";

describe("transaction.range (a missing or out-of-range member keeps its default)", () => {
  test.each([
    [{}, DEFAULT_TRANSACTION_RANGE],
    [null, DEFAULT_TRANSACTION_RANGE],
    [
      { from: -60000, to: 120000 },
      { from: -60000, to: 120000, message_from: -300000, message_to: 300000 },
    ],
    [
      { from: -86400000, to: 86400000, message_from: 0, message_to: 0 },
      { from: -86400000, to: 86400000, message_from: 0, message_to: 0 },
    ],
    [{ from: -86400001, to: 86400001 }, DEFAULT_TRANSACTION_RANGE],
    [{ from: 5, to: -5 }, DEFAULT_TRANSACTION_RANGE],
    [{ from: "-1000", to: 1.5 }, DEFAULT_TRANSACTION_RANGE],
    [
      { message_from: -1000, message_to: 2000, extra: 1 },
      { from: -300000, to: 300000, message_from: -1000, message_to: 2000 },
    ],
  ])("%j → %j", (input, expected) => {
    expect(normalizeTransactionRange(input)).toEqual({ ...expected });
  });
});

describe("export.transaction", () => {
  test("keeps ip/alias entries and defaults disabled to false", () => {
    expect(
      validateExportTransaction({
        excludedCIDR: [
          { ip: "10.0.0.0/8", disabled: true },
          { alias: "sbc-1" },
          { ip: "2001:db8::1", disabled: false },
        ],
      }),
    ).toEqual({
      excludedCIDR: [
        { ip: "10.0.0.0/8", disabled: true },
        { alias: "sbc-1", disabled: false },
        { ip: "2001:db8::1", disabled: false },
      ],
    });
  });

  test.each([
    [{ excludedCIDR: "10.0.0.0/8" }, "data.excludedCIDR"],
    [{ excludedCIDR: [{ ip: "10.0.0.300" }] }, "data.excludedCIDR[0].ip"],
    [{ excludedCIDR: [{ ip: "10.0.0.1" }, {}] }, "data.excludedCIDR[1]"],
    [{ excludedCIDR: [{ alias: "x", disabled: "yes" }] }, "data.excludedCIDR[0].disabled"],
  ])("%j is rejected naming %s", (input, field) => {
    try {
      validateExportTransaction(input);
      throw new Error("accepted");
    } catch (e) {
      expect(e).toBeInstanceOf(AppError);
      expect((e as AppError).code).toBe("VALIDATION");
      expect((e as AppError).details?.fields).toEqual([field]);
    }
  });
});
