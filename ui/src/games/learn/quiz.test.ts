import { expect, test } from "bun:test";
import { buildQuiz, NEW_SCORE, scoreAnswer } from "./quiz.ts";
import { nextRule, parseStep, TEXTBOOK_FLOWS } from "./sip-flow.ts";

const steps = (i: number) => TEXTBOOK_FLOWS[i]!.messages.map(([p, s, d]) => parseStep(p, s, d)!);

test("parseStep reads the start line, the dialog identifiers, CSeq and RSeq; short header names too", () => {
  const s = parseStep(
    "SIP/2.0 180 Ringing\r\ni: abc@h\r\nf: <sip:a@x>;tag=ft\r\nt: <sip:b@y>;tag=tt\r\nCSeq: 7 INVITE\r\nRSeq: 3\r\nv: SIP/2.0/UDP h;branch=z9hG4bK1\r\n\r\n",
    "1.1.1.1",
    "2.2.2.2",
  )!;
  expect(s).toMatchObject({
    label: "180 Ringing",
    code: 180,
    method: null,
    callId: "abc@h",
    fromTag: "ft",
    toTag: "tt",
    cseqNum: 7,
    cseqMethod: "INVITE",
    rseq: 3,
  });
  expect(s.headers).toContain("v: SIP/2.0/UDP h;branch=z9hG4bK1");
  expect(parseStep("hello", "a", "b")).toBeNull();
  expect(parseStep("BYE sip:b@y SIP/2.0\r\nCSeq: 2 BYE\r\n\r\n", "a", "b")).toBeNull(); // no Call-ID
});

test.each([
  ["SIP/2.0 200 OK", "1 INVITE", "", "ACK", "§13.2.2.4"],
  ["SIP/2.0 486 Busy Here", "1 INVITE", "", "ACK", "§17.1.1.3"],
  ["SIP/2.0 183 Session Progress", "1 INVITE", "RSeq: 1\r\n", "PRACK", "RFC 3262 §4"],
  ["BYE sip:b@y SIP/2.0", "2 BYE", "", "200 OK (BYE)", "§15.1.2"],
  ["CANCEL sip:b@y SIP/2.0", "1 CANCEL", "", "200 OK (CANCEL)", "§9.2"],
  ["SIP/2.0 200 OK", "1 CANCEL", "", "487 Request Terminated", "§9.2"],
  ["INVITE sip:b@y SIP/2.0", "1 INVITE", "", "100 Trying", "§8.2.6.1"],
])("nextRule after %s (CSeq %s) is %s", (first, cseq, extra, answer, section) => {
  const step = parseStep(
    `${first}\r\nCall-ID: c\r\nFrom: <sip:a@x>;tag=f\r\nTo: <sip:b@y>\r\nCSeq: ${cseq}\r\n${extra}\r\n`,
    "a",
    "b",
  )!;
  const rule = nextRule(step)!;
  expect(rule.answer).toBe(answer);
  expect(rule.why).toContain(section);
});

test("no rule where the protocol leaves the next message open: an unreliable 180, a 100, an ACK", () => {
  for (const [first, cseq] of [
    ["SIP/2.0 180 Ringing", "1 INVITE"],
    ["SIP/2.0 100 Trying", "1 INVITE"],
    ["ACK sip:b@y SIP/2.0", "1 ACK"],
  ])
    expect(nextRule(parseStep(`${first}\r\nCall-ID: c\r\nCSeq: ${cseq}\r\n\r\n`, "a", "b")!)).toBeNull();
});

test("the reliable-180 textbook quiz: questions in ladder order, answers are the captured values", () => {
  const q = buildQuiz(steps(0), 5);
  expect(q.map((x) => `${x.kind}:${x.answer}`)).toEqual([
    "next:100 Trying",
    "dialog:Call-ID + From tag 9fxced76sl + To tag 8321234356",
    "next:PRACK",
    "cseq:CSeq: 2 PRACK",
    "next:200 OK (PRACK)",
    "next:ACK",
    "cseq:CSeq: 1 ACK",
    "cseq:CSeq: 3 BYE",
  ]);
  for (const x of q) {
    expect(x.choices).toContain(x.answer);
    expect(new Set(x.choices).size).toBe(x.choices.length);
    expect(x.choices.length).toBeGreaterThanOrEqual(3);
    expect(x.reveal).toBeGreaterThanOrEqual(x.shown);
  }
  // The ACK question shows up to the 200 OK to INVITE and reveals through the ACK.
  const ack = q.find((x) => x.kind === "next" && x.answer === "ACK")!;
  expect([ack.shown, ack.reveal]).toEqual([6, 7]);
});

test("the cancelled-call quiz asks for the CANCEL's CSeq, 200 OK (CANCEL), 487 and its ACK", () => {
  expect(buildQuiz(steps(1), 9).map((x) => `${x.kind}:${x.answer}`)).toEqual([
    "next:100 Trying",
    "dialog:Call-ID + From tag 9fxced76sl + To tag a6c85cf",
    "cseq:CSeq: 314159 CANCEL",
    "next:200 OK (CANCEL)",
    "next:487 Request Terminated",
    "next:ACK",
    "cseq:CSeq: 314159 ACK",
  ]);
});

test("a multi-hop capture asks each transaction once: the forwarded INVITE and 200 OK repeat no question", () => {
  const [a, p, c] = ["10.0.0.1", "10.0.0.2", "10.0.0.3"];
  const flow = steps(0);
  const twice = flow.flatMap((s) => [
    s,
    { ...s, src: s.src === "alice.atlanta.example.com" ? p : c, dst: s.dst === "alice.atlanta.example.com" ? p : a },
  ]);
  expect(buildQuiz(twice, 5).map((x) => x.answer)).toEqual(buildQuiz(flow, 5).map((x) => x.answer));
});

test("scoreAnswer: 10 a right answer, +5 per streak step up to +15, a wrong one resets the streak", () => {
  let s = NEW_SCORE;
  for (const right of [true, true, true, true, true, false, true]) s = scoreAnswer(s, right);
  expect(s).toEqual({ points: 10 + 15 + 20 + 25 + 25 + 10, correct: 6, answered: 7, streak: 1 });
});
