import { expect, test } from "bun:test";
import { shiftWords } from "./shift-words.ts";

test("the import's time shift in words: the two largest units", () => {
  const s = 1e6;
  expect(shiftWords((21 * 365 + 10) * 86_400 * s + 3600 * s)).toBe("shifted 21 y 10 d to now");
  expect(shiftWords(3 * 3600 * s + 5 * 60 * s + 7 * s)).toBe("shifted 3 h 5 min to now");
  expect(shiftWords(42 * s)).toBe("shifted 42 s to now");
  expect(shiftWords(-2 * 86_400 * s)).toBe("shifted 2 d back to now");
  expect(shiftWords(200_000)).toBe("shifted less than 1 s to now");
});
