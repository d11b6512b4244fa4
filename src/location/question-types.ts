import type { CreateElicitationRequest, RequestPermissionRequest } from "@agentclientprotocol/sdk";

/** What an agent asked: a permission with options, or a form. */
export type QuestionRequest =
  | { readonly kind: "permission"; readonly request: RequestPermissionRequest }
  | { readonly kind: "elicitation"; readonly request: CreateElicitationRequest };

/** A person's answer: a permission option, or a form action with its content. */
export type QuestionAnswer =
  | { readonly optionId: string }
  | { readonly action: "accept"; readonly content: Record<string, unknown> }
  | { readonly action: "decline" | "cancel" };
