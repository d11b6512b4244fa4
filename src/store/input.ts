import { isAbsolute } from "node:path";
import { StoreInputError } from "./errors.js";

/** A value as it comes back from JSON. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

// Checks at the store boundary: callers are typed, but ids and payloads often come off the network.

export function requireText(operation: string, field: string, value: unknown): string {
  if (typeof value !== "string" || value.length === 0) {
    throw new StoreInputError(operation, `${field} must be a non-empty string, got ${describe(value)}`);
  }
  return value;
}

export function requireNullableText(operation: string, field: string, value: unknown): string | null {
  return value === null || value === undefined ? null : requireText(operation, field, value);
}

export function requireAbsolutePath(operation: string, field: string, value: unknown): string {
  const text = requireText(operation, field, value);
  if (!isAbsolute(text)) {
    throw new StoreInputError(operation, `${field} must be an absolute path, got ${JSON.stringify(text)}`);
  }
  return text;
}

/** Milliseconds since the epoch. */
export function requireTimestamp(operation: string, field: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    const problem = `${field} must be a non-negative integer of milliseconds, got ${describe(value)}`;
    throw new StoreInputError(operation, problem);
  }
  return value;
}

/**
 * Where a session page goes on: whole milliseconds that both stores compare exactly (a JS number, PostgreSQL's bigint)
 * and an id PostgreSQL's text can hold (no NUL), so a forged cursor is refused here, never a bad parameter there.
 */
export function requireSessionKey<K extends { readonly updatedAt: number; readonly createdAt: number; readonly id: string }>(
  operation: string,
  key: K,
): K {
  requireTimestamp(operation, "after.updatedAt", key.updatedAt);
  requireTimestamp(operation, "after.createdAt", key.createdAt);
  if (requireText(operation, "after.id", key.id).includes("\0")) throw new StoreInputError(operation, "after.id must not contain NUL");
  return key;
}

export function requireCount(operation: string, field: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new StoreInputError(operation, `${field} must be a non-negative integer, got ${describe(value)}`);
  }
  return value;
}

export function requireOneOf<T extends string>(operation: string, field: string, value: unknown, allowed: readonly T[]): T {
  if (!allowed.includes(value as T)) {
    throw new StoreInputError(operation, `${field} must be one of ${allowed.join(", ")}, got ${describe(value)}`);
  }
  return value as T;
}

export function encodeJson(operation: string, field: string, value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new StoreInputError(operation, `${field} is not JSON-serializable: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (text === undefined) {
    throw new StoreInputError(operation, `${field} is not JSON-serializable, got ${describe(value)}`);
  }
  return text;
}

export function decodeJson(text: string): Json {
  return JSON.parse(text) as Json;
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || value == null) return String(value);
  return typeof value;
}
