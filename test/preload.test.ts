import { expect, test } from "bun:test";

// test/preload.ts pins these whatever the machine or the caller's shell sets (e.g. TZ=Asia/Kolkata).
test("the test preload pins the time zone to UTC and turns colour off", () => {
  expect(process.env.TZ).toBe("UTC");
  expect(new Date(Date.UTC(2026, 0, 1, 12)).getHours()).toBe(12);
  expect(new Date(0).getTimezoneOffset()).toBe(0);
  expect(process.env.NO_COLOR).toBe("1");
});
