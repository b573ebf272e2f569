import { expect, test } from "bun:test";
import type { AppError } from "../core/index.ts";
import { encodeCursor, orderBy, pageRequest } from "./page.ts";

const SORTS = { name: "name", created_at: "created_at" };

test("defaults: limit 100, first page, default sort", () => {
  expect(pageRequest({}, SORTS, "name")).toEqual({ limit: 100, offset: 0, sort: "name", search: "" });
});

test("a cursor round-trips for the same sort", () => {
  const c = encodeCursor(200, "-created_at");
  expect(pageRequest({ cursor: c, sort: "-created_at", limit: 5 }, SORTS, "name").offset).toBe(200);
});

test.each([
  [{ limit: 0 }, "page[limit]"],
  [{ limit: 1001 }, "page[limit]"],
  [{ sort: "password_hash" }, "sort"],
  [{ cursor: "not-a-cursor" }, "page[cursor]"],
  [{ cursor: "10:password_hash" }, "page[cursor]"],
])("%j → 400 naming %s", (input, field) => {
  try {
    pageRequest(input, SORTS, "name");
    throw new Error("accepted");
  } catch (e) {
    expect((e as AppError).code).toBe("VALIDATION");
    expect((e as AppError).details?.fields).toEqual([field]);
  }
});

test("a cursor without sort continues in its order; with another sort it is a 409", () => {
  expect(pageRequest({ cursor: encodeCursor(10, "-created_at") }, SORTS, "name")).toMatchObject({
    offset: 10,
    sort: "-created_at",
  });
  try {
    pageRequest({ cursor: encodeCursor(10, "name"), sort: "-name" }, SORTS, "name");
    throw new Error("accepted");
  } catch (e) {
    expect((e as AppError).code).toBe("CONFLICT");
    expect((e as AppError).details?.fields).toEqual(["page[cursor]"]);
  }
});

test("orderBy maps public keys to columns with a stable tie-break", () => {
  expect(orderBy("-created_at", SORTS)).toBe("created_at DESC, id DESC");
  expect(orderBy("name", SORTS, ["node_id", "ip"])).toBe("name ASC, node_id ASC, ip ASC");
});
