import { REDACTED } from "../config/redact.js";
import { withMessage } from "../upstream/upstream-errors.js";

/** How deep a cause chain or a JSON value is followed; deeper parts are replaced whole. */
const MAX_DEPTH = 32;

/**
 * `error` with secrets taken out of its message, stack, JSON-RPC `data` and causes, for
 * errors that come from an upstream (which may quote the token it was given). The copy keeps
 * the class and every field; an error with nothing to hide is returned as it is. Anything
 * thrown that is not an `Error` is returned unchanged.
 */
export function redactError(error: unknown, redact: (text: string) => string, depth = 0): unknown {
  if (!(error instanceof Error)) return error;
  const message = redact(error.message);
  const data = (error as { data?: unknown }).data;
  const cleanData = data === undefined ? undefined : redactValue(data, redact);
  const cause = depth < MAX_DEPTH ? redactError(error.cause, redact, depth + 1) : undefined;
  if (message === error.message && cleanData === data && cause === error.cause) return error;
  const copy = withMessage(error, message, redact);
  if (cleanData !== data) Object.defineProperty(copy, "data", { value: cleanData, enumerable: true });
  if (cause !== error.cause)
    Object.defineProperty(copy, "cause", { value: cause, writable: true, configurable: true });
  return copy;
}

/**
 * A tool result with secrets taken out of every string in it, when it is an error
 * (`isError: true`). Successful results are returned unscanned: they are the tool's answer,
 * often large, and on the hot path; a tool asked to print its own environment may show it.
 */
export function redactToolError<T>(result: T, redact: (text: string) => string): T {
  if ((result as { isError?: unknown } | null)?.isError !== true) return result;
  return redactValue(result, redact);
}

/** `value` with `redact` applied to every string (keys too); the same object when nothing changed. */
export function redactValue<T>(value: T, redact: (text: string) => string, depth = 0): T {
  if (typeof value === "string") return redact(value) as T;
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_DEPTH) return REDACTED as T;
  if (Array.isArray(value)) {
    const items = value.map((item) => redactValue(item, redact, depth + 1));
    return (items.some((item, i) => item !== value[i]) ? items : value) as T;
  }
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const cleanKey = redact(key);
    const clean = redactValue(item, redact, depth + 1);
    if (cleanKey !== key || clean !== item) changed = true;
    out[cleanKey] = clean;
  }
  return (changed ? out : value) as T;
}
