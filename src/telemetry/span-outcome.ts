import { type Histogram, type Span, SpanStatusCode } from "@opentelemetry/api";
import { RpcError } from "../errors.js";
import { toWireError } from "../protocol/wire-error.js";

/** `error.type` of a thrown error: its JSON-RPC code, as the conventions ask. */
export function errorType(error: unknown): string {
  if (error instanceof RpcError) return String(error.code);
  return String(toWireError(error).code);
}

/**
 * Runs `work` as what `span` measures, and records how it ended, as both span kinds do: a
 * tool's own error (`isError`) is `error.type` `tool_error`; a thrown one its JSON-RPC code,
 * also as `rpc.response.status_code`. Ends the span, and records the duration in `duration`
 * with `metric` (plus `error.type`). `result` sees a result before it is returned (content
 * capture).
 */
export async function measured<T>(
  span: Span,
  duration: Histogram,
  metric: Record<string, string>,
  work: () => Promise<T>,
  result?: (value: T) => void,
): Promise<T> {
  const started = performance.now();
  let type: string | undefined;
  try {
    const value = await work();
    if ((value as { isError?: unknown } | undefined)?.isError === true) {
      type = "tool_error";
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    result?.(value);
    return value;
  } catch (error) {
    type = errorType(error);
    span.setAttribute("rpc.response.status_code", type);
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message : String(error),
    });
    throw error;
  } finally {
    if (type !== undefined) span.setAttribute("error.type", type);
    span.end();
    duration.record(
      (performance.now() - started) / 1000,
      type === undefined ? metric : { ...metric, "error.type": type },
    );
  }
}
