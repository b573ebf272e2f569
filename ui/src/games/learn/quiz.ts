/**
 * SIP Dialog Master questions from one call's ladder (docs/GAMES.md "SIP Dialog Master"): what must
 * come next, which values identify the dialog, which CSeq a request carries. Every answer is the
 * captured message's own value, checked against the RFC rule that explains it. Pure.
 */
import { NEXT_CHOICES, nextRule, type FlowStep } from "./sip-flow.ts";
import { seededRandom, shuffled } from "./random.ts";

export interface Question {
  kind: "next" | "dialog" | "cseq";
  /** Steps 0..shown-1 of the ladder are visible while the question is asked. */
  shown: number;
  /** Steps visible once it is answered. */
  reveal: number;
  prompt: string;
  choices: string[];
  answer: string;
  why: string;
}

export const MAX_QUESTIONS = 8;

const CSEQ_WHY: Record<string, string> = {
  ACK: "RFC 3261 §17.1.1.3 and §13.2.2.4: an ACK carries the CSeq number of the INVITE it acknowledges, with the method ACK.",
  CANCEL:
    "RFC 3261 §9.1: a CANCEL carries the same CSeq number as the request it cancels, with the method CANCEL (and the same Via branch).",
  BYE: "RFC 3261 §12.2.1.1: each new request a UA sends within the dialog carries a CSeq number higher than its previous one (one more, as UAs usually count).",
  PRACK:
    "RFC 3262 §7.2 and RFC 3261 §12.2.1.1: the PRACK is a new request in the early dialog, so its CSeq number is the UAC's next one; RAck names the 18x being acknowledged.",
};

function pick<T>(pool: readonly T[], n: number, rand: () => number): T[] {
  return shuffled(pool, rand).slice(0, n);
}

/** The questions of one call, in ladder order, at most MAX_QUESTIONS. */
export function buildQuiz(steps: readonly FlowStep[], seed = 1): Question[] {
  const rand = seededRandom(seed);
  const out: Question[] = [];
  const seen = new Set<string>();
  const add = (key: string, q: Question) => {
    if (seen.has(key) || out.length >= MAX_QUESTIONS) return;
    seen.add(key);
    out.push(q);
  };
  let dialogAsked = false;
  steps.forEach((step, i) => {
    // CSeq of a request the rules fix (asked before it shows).
    const m = step.method;
    if (m && CSEQ_WHY[m] && i > 0) {
      const right = `${step.cseqNum} ${step.cseqMethod}`;
      const wrong = [
        `${step.cseqNum + 1} ${m}`,
        `${step.cseqNum} INVITE`,
        `${step.cseqNum > 1 ? step.cseqNum - 1 : step.cseqNum + 2} ${m}`,
      ].filter((c) => c !== right);
      add(`cseq ${m} ${right}`, {
        kind: "cseq",
        shown: i,
        reveal: i + 1,
        prompt: `Next, ${step.src} sends ${m}. Which CSeq does it carry?`,
        choices: shuffled([right, ...new Set(wrong)].slice(0, 4), rand).map((c) => `CSeq: ${c}`),
        answer: `CSeq: ${right}`,
        why: CSEQ_WHY[m]!,
      });
    }
    // The dialog identifiers, once the first response with a To tag shows.
    if (!dialogAsked && step.code !== null && step.code > 100 && step.toTag && step.fromTag) {
      dialogAsked = true;
      // The Call-ID's value is left out of the choices: long in real captures, and the same in three of them.
      const right = `Call-ID + From tag ${step.fromTag} + To tag ${step.toTag}`;
      add("dialog", {
        kind: "dialog",
        shown: i + 1,
        reveal: i + 1,
        prompt: `${step.label} created the dialog. Which values identify it?`,
        choices: shuffled(
          [
            right,
            "Call-ID + Via branch",
            `Call-ID + CSeq ${step.cseqNum}`,
            `From tag ${step.fromTag} + To tag ${step.toTag}`,
          ],
          rand,
        ),
        answer: right,
        why: "RFC 3261 §12: the Call-ID, the local and the remote tag (From and To tags; the UAS adds the To tag, §12.1.1) identify a dialog. A Via branch names a transaction (§17); CSeq orders requests.",
      });
    }
    // What must come next, when a rule fixes it and the capture shows it.
    const rule = nextRule(step);
    if (!rule) return;
    const j = steps.findIndex((s, k) => k > i && rule.matches(s));
    if (j < 0) return;
    add(`next ${step.label} ${step.cseqNum} ${step.cseqMethod}`, {
      kind: "next",
      shown: i + 1,
      reveal: j + 1,
      prompt: `After ${step.label} (CSeq ${step.cseqNum} ${step.cseqMethod}), which message must follow?`,
      choices: shuffled(
        [
          rule.answer,
          ...pick(
            NEXT_CHOICES.filter((c) => c !== rule.answer),
            3,
            rand,
          ),
        ],
        rand,
      ),
      answer: rule.answer,
      why: rule.why,
    });
  });
  return out.sort((a, b) => a.shown - b.shown);
}

export interface Score {
  points: number;
  correct: number;
  answered: number;
  streak: number;
}

export const NEW_SCORE: Score = { points: 0, correct: 0, answered: 0, streak: 0 };

/** 10 points a right answer plus 5 per earlier answer in the streak (at most +15); a wrong one ends the streak. */
export function scoreAnswer(s: Score, right: boolean): Score {
  if (!right) return { ...s, answered: s.answered + 1, streak: 0 };
  return {
    points: s.points + 10 + 5 * Math.min(s.streak, 3),
    correct: s.correct + 1,
    answered: s.answered + 1,
    streak: s.streak + 1,
  };
}
