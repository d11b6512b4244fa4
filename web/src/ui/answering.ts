import { errorWords } from "../util/error-words.js";
import { useState } from "preact/hooks";
import type { QuestionAnswer } from "../api/types.js";

/** Answers a question over REST (it reaches the agent whoever holds the session). */
export type AnswerQuestion = (questionId: string, answer: QuestionAnswer) => Promise<void>;

type Sending = { readonly name: "idle" } | { readonly name: "sending" } | { readonly name: "failed"; readonly message: string };

/** An answer on its way: the controls wait while it is sent, and a refusal is shown until the next try. */
export function useAnswering(questionId: string, onAnswer: AnswerQuestion) {
  const [sending, setSending] = useState<Sending>({ name: "idle" });
  const answer = (value: QuestionAnswer): void => {
    setSending({ name: "sending" });
    onAnswer(questionId, value).catch((error: unknown) => setSending({ name: "failed", message: errorWords(error) }));
  };
  return { busy: sending.name === "sending", failure: sending.name === "failed" ? sending.message : null, answer };
}
