import { errorWords } from "../util/error-words.js";
import type { QuestionAnswer } from "../api/types.js";
import { Observable, useObservable } from "../live/observable.js";
import type { FieldValue } from "./form-fields.js";

/** Answers a question over REST (it reaches the agent whoever holds the session). */
export type AnswerQuestion = (questionId: string, answer: QuestionAnswer) => Promise<void>;

type Sending = { readonly name: "idle" } | { readonly name: "sending" } | { readonly name: "failed"; readonly message: string };

/**
 * A question's answer on its way, and what was typed into its form, by question and for the page's life: a
 * conversation's row scrolled out of view and back (its view unmounted meanwhile), or the same question shown in the
 * Questions panel, finds them as they were. A question that stops waiting forgets both ({@link forgetAnswering}).
 */
const answers = new Map<string, Observable<Sending>>();
const formValues = new Map<string, Record<string, FieldValue>>();

function sendingOf(questionId: string): Observable<Sending> {
  let sending = answers.get(questionId);
  if (!sending) {
    sending = new Observable<Sending>({ name: "idle" });
    answers.set(questionId, sending);
  }
  return sending;
}

/** An answer on its way: the controls wait while it is sent, and a refusal is shown until the next try. */
export function useAnswering(questionId: string, onAnswer: AnswerQuestion) {
  const state = sendingOf(questionId);
  const sending = useObservable(state);
  const answer = (value: QuestionAnswer): void => {
    state.set({ name: "sending" });
    onAnswer(questionId, value).then(
      () => {
        state.set({ name: "idle" });
        answers.delete(questionId);
        formValues.delete(questionId);
      },
      (error: unknown) => state.set({ name: "failed", message: errorWords(error) }),
    );
  };
  return { busy: sending.name === "sending", failure: sending.name === "failed" ? sending.message : null, answer };
}

/** Questions that are no longer waiting (answered here or elsewhere, withdrawn): what was kept for them goes. */
export function forgetAnswering(questionIds: Iterable<string>): void {
  for (const questionId of questionIds) {
    answers.delete(questionId);
    formValues.delete(questionId);
  }
}

/** What was typed into a form question's fields so far, if anything. */
export function formValuesOf(questionId: string): Record<string, FieldValue> | undefined {
  return formValues.get(questionId);
}

export function keepFormValues(questionId: string, values: Record<string, FieldValue>): void {
  formValues.set(questionId, values);
}
