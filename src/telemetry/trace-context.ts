import type { TextMapGetter, TextMapSetter } from "@opentelemetry/api";

/** The `_meta` keys that carry W3C trace context and baggage across MCP, as HTTP headers do. */
export const TRACE_KEYS = ["traceparent", "tracestate", "baggage"] as const;

/** Reads trace context from a request's `_meta` (first) and its HTTP headers. */
export const metaGetter: TextMapGetter<{
  meta: Record<string, unknown> | undefined;
  headers: Readonly<Record<string, string | string[] | undefined>> | undefined;
}> = {
  keys: (carrier) => [...Object.keys(carrier.meta ?? {}), ...Object.keys(carrier.headers ?? {})],
  get(carrier, key) {
    const fromMeta = carrier.meta?.[key];
    if (typeof fromMeta === "string") return fromMeta;
    return carrier.headers?.[key];
  },
};

/** Writes trace context into an upstream request's `_meta`. */
export const metaSetter: TextMapSetter<Record<string, unknown>> = {
  set(carrier, key, value) {
    carrier[key] = value;
  },
};
