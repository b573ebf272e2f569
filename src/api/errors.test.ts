import { expect, test } from "bun:test";
import { Elysia } from "elysia";
import { AppError, createLogger } from "../core/index.ts";
import { errorHandler } from "./errors.ts";

const app = new Elysia()
  .use(errorHandler(createLogger({ test: true, level: "fatal" })))
  .get("/limited", () => {
    throw new AppError("RATE_LIMITED", "too many attempts", { details: { retry_after_sec: 42.2 } });
  })
  .get("/busy", () => {
    throw new AppError("UNAVAILABLE", "the lake is starting");
  })
  .get("/bad", () => {
    throw new AppError("VALIDATION", "no");
  });

const get = (path: string) => app.handle(new Request(`http://localhost${path}`));

test("429 and 503 carry Retry-After (the error's seconds rounded up, else 1); other statuses none", async () => {
  const limited = await get("/limited");
  expect([limited.status, limited.headers.get("retry-after")]).toEqual([429, "43"]);
  const busy = await get("/busy");
  expect([busy.status, busy.headers.get("retry-after")]).toEqual([503, "1"]);
  // The 5xx body stays generic: the message is logged, not returned.
  expect(((await busy.json()) as { message: string }).message).not.toContain("lake");
  const bad = await get("/bad");
  expect([bad.status, bad.headers.get("retry-after")]).toEqual([400, null]);
});
