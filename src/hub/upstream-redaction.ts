import { redactValue } from "../config/redact.js";

/**
 * A tool result with secrets taken out of every string in it, when it is an error
 * (`isError: true`). Successful results are returned unscanned: they are the tool's answer,
 * often large, and on the hot path; a tool asked to print its own environment may show it.
 */
export function redactToolError<T>(result: T, redact: (text: string) => string): T {
  if ((result as { isError?: unknown } | null)?.isError !== true) return result;
  return redactValue(result, redact);
}
