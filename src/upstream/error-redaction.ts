import { MAX_REDACT_DEPTH, REDACTED, redactValue } from "../config/redact.js";

/**
 * `error` with secrets taken out of its message, stack, `hint`, JSON-RPC `data` and causes
 * (each cause redacted the same way), for errors that come from an upstream, which may quote
 * the token it was given. The copy keeps the class (same prototype) and every other own field
 * (`code`, `server`, `retryAt`, `retryable`, ...); an error with nothing to hide is returned as
 * it is. Anything thrown that is not an `Error` is redacted as a value.
 */
export function redactError(error: unknown, redact: (text: string) => string, depth = 0): unknown {
  if (!(error instanceof Error)) return redactValue(error, redact, depth);
  const fields = error as { hint?: unknown; data?: unknown };
  const changes: Record<string, unknown> = {};
  const message = redact(error.message);
  if (message !== error.message) changes.message = message;
  if (typeof fields.hint === "string") {
    const hint = redact(fields.hint);
    if (hint !== fields.hint) changes.hint = hint;
  }
  if (fields.data !== undefined) {
    const data = redactValue(fields.data, redact);
    if (data !== fields.data) changes.data = data;
  }
  if (error.cause !== undefined) {
    const cause = depth < MAX_REDACT_DEPTH ? redactError(error.cause, redact, depth + 1) : REDACTED;
    if (cause !== error.cause) changes.cause = cause;
  }
  if (Object.keys(changes).length === 0) return error;
  const copy = Object.create(Object.getPrototypeOf(error) as object) as Error;
  Object.defineProperties(copy, Object.getOwnPropertyDescriptors(error));
  for (const [key, value] of Object.entries(changes)) {
    const own = Object.getOwnPropertyDescriptor(error, key);
    Object.defineProperty(copy, key, {
      value,
      writable: true,
      configurable: true,
      enumerable: own?.enumerable ?? (key !== "message" && key !== "cause"),
    });
  }
  // The stack starts with the message and may quote it again further down.
  if (error.stack !== undefined)
    Object.defineProperty(copy, "stack", { value: redact(error.stack), writable: true, configurable: true });
  return copy;
}
