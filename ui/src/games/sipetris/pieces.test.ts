import { expect, test } from "bun:test";
import { pieceOf } from "./widget.ts";

const sip = (method: string, code = "", text = "") => ({
  ts: 0,
  proto: 1,
  sip: { method, resp_code: code, resp_text: text, callid: "c", cseq: "1 INVITE", from_user: "a", to_user: "b" },
});

test("SIP methods and response classes become pieces, failures garbage, other events nothing", () => {
  expect(pieceOf(sip("INVITE"))).toEqual({ kind: "I", label: "INVITE" });
  expect(pieceOf(sip("REGISTER"))).toEqual({ kind: "O", label: "REGISTER" });
  expect(pieceOf(sip("SUBSCRIBE"))).toEqual({ kind: "T", label: "SUBSCRIBE" });
  expect(pieceOf(sip("", "180", "Ringing"))).toEqual({ kind: "T", label: "180 Ringing" });
  expect(pieceOf(sip("", "200", "OK"))).toEqual({ kind: "L", label: "200 OK" });
  expect(pieceOf(sip("", "302", "Moved Temporarily"))).toEqual({ kind: "J", label: "302 Moved Temporarily" });
  expect(pieceOf(sip("", "503", "Service Unavailable"))).toEqual({ garbage: true, label: "503 Service Unavailable" });
  expect(pieceOf({ ts: 0, proto: 5 })).toBeUndefined();
});
