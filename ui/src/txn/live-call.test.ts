import { describe, expect, test } from "bun:test";
import { liveMessage } from "./live-call.ts";

const sip = {
  method: "INVITE",
  resp_code: "",
  resp_text: "",
  callid: "a84b@pbx",
  cseq: "1 INVITE",
  from_user: "alice",
  to_user: "bob",
  ruri_user: "bob",
};
const base = {
  ts: 1_760_000_000_123,
  proto: 1,
  src_ip: "10.0.0.1",
  src_port: 5060,
  dst_ip: "10.0.0.2",
  dst_port: 5080,
  node_id: 2001,
};

describe("live frames as rows of the call", () => {
  test("a request: event and label the method, no payload when none came", () => {
    expect(liveMessage({ ...base, sip }, 1)).toEqual({
      uuid: "live-1",
      live: true,
      timestamp_us: 1_760_000_000_123_000,
      session_id: "a84b@pbx",
      src_ip: "10.0.0.1",
      dst_ip: "10.0.0.2",
      src_port: 5060,
      dst_port: 5080,
      event: "INVITE",
      label: "INVITE",
      method: "INVITE",
      response_code: null,
      cseq_method: "INVITE",
      payload: null,
      caller: "alice",
      callee: "bob",
      proto_type: 1,
      node_id: 2001,
    });
  });

  test("a response: event the status code, label with its text, method of the CSeq; text payload kept, base64 not", () => {
    const ok = { ...sip, method: "BYE", resp_code: "200", resp_text: "OK", cseq: "2 BYE" };
    expect(liveMessage({ ...base, sip: ok, payload: "SIP/2.0 200 OK\r\n\r\n" }, 7)).toMatchObject({
      uuid: "live-7",
      event: "200",
      label: "200 OK",
      method: null,
      response_code: 200,
      cseq_method: "BYE",
      payload: "SIP/2.0 200 OK\r\n\r\n",
    });
    expect(liveMessage({ ...base, sip: ok, payload: "AAEC", payload_encoding: "base64" }, 8)?.payload).toBeNull();
  });

  test("frames without SIP (RTCP, logs, SIP that did not parse) are no rows", () => {
    expect(liveMessage({ ...base, proto: 5 }, 1)).toBeUndefined();
    expect(liveMessage({ ...base, proto: 1 }, 1)).toBeUndefined();
  });
});
