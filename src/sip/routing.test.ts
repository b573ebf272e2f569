import { expect, test } from "bun:test";
import { sipTableFor, type SipTable } from "./routing.ts";

test.each<[string, SipTable]>([
  ["INVITE", "call"],
  ["ACK", "call"],
  ["PRACK", "call"],
  ["UPDATE", "call"],
  ["BYE", "call"],
  ["CANCEL", "call"],
  ["INFO", "call"],
  ["invite", "call"],
  ["Bye", "call"],
  ["REGISTER", "registration"],
  ["register", "registration"],
  ["OPTIONS", "default"],
  ["NOTIFY", "default"],
  ["SUBSCRIBE", "default"],
  ["MESSAGE", "default"],
  ["PUBLISH", "default"],
  ["REFER", "default"],
  ["", "default"],
])("sipTableFor(%p) = %p", (method, table) => {
  expect(sipTableFor(method)).toBe(table);
});
