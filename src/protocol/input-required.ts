import { AbortedError, McplexError } from "../errors.js";
import type { ServerRequestHandler } from "./server-requests.js";

/** Handler for the requests inside a 2026 `input_required` result (same shape as 2025 server requests). */
export type InputRequestHandler = ServerRequestHandler;

/** Rounds of `input_required` a single call may go through before it is given up. */
const MAX_ROUNDS = 16;

export interface InputRequiredResult {
  resultType: "input_required";
  inputRequests?: Record<string, { method?: unknown; params?: unknown }>;
  requestState?: string;
}

/** Whether a result is a 2026 `input_required` interim result. */
export function isInputRequired(result: unknown): result is InputRequiredResult {
  return (
    typeof result === "object" &&
    result !== null &&
    (result as { resultType?: unknown }).resultType === "input_required"
  );
}

/**
 * Drives the 2026 multi-round-trip flow: while the server answers
 * `resultType: "input_required"`, each input request goes to the handler and the
 * same request is sent again with `inputResponses` and the exact `requestState`.
 * Without a handler the call fails with a clear error instead of hanging.
 */
export async function resolveInputRequired<T>(
  first: T,
  options: {
    server: string;
    handler: InputRequestHandler | undefined;
    signal?: AbortSignal | undefined;
    retry: (extra: Record<string, unknown>) => Promise<T>;
  },
): Promise<T> {
  let result: unknown = first;
  for (let round = 0; isInputRequired(result); round++) {
    const { server, handler } = options;
    const requests = Object.entries(result.inputRequests ?? {});
    if (round >= MAX_ROUNDS) {
      throw new McplexError(
        "PROTOCOL_ERROR",
        `${server}: gave up after ${MAX_ROUNDS} rounds of input_required`,
        {
          server,
        },
      );
    }
    if (handler === undefined && requests.length > 0) {
      const methods = requests.map(([, r]) => String(r.method)).join(", ");
      throw new McplexError(
        "PROTOCOL_ERROR",
        `${server}: the server needs input (${methods}) but no handler was given; pass onServerRequest to the hub or the call`,
        { server, hint: "give the hub an onServerRequest handler" },
      );
    }
    if (options.signal?.aborted) throw new AbortedError(`${server}: aborted`, { server });
    const signal = options.signal ?? new AbortController().signal;
    const answers = await Promise.all(
      requests.map(async ([key, request]) => {
        const params =
          typeof request.params === "object" && request.params !== null
            ? (request.params as Record<string, unknown>)
            : {};
        const answer = await handler!({ server, method: String(request.method), params, signal });
        return [key, answer] as const;
      }),
    );
    const extra: Record<string, unknown> = {};
    if (answers.length > 0) extra.inputResponses = Object.fromEntries(answers);
    if (result.requestState !== undefined) extra.requestState = result.requestState;
    result = await options.retry(extra);
  }
  return result as T;
}
