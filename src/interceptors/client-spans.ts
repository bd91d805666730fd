import {
  context,
  type Histogram,
  SpanKind,
  type TextMapPropagator,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { Interceptor } from "../hub/call-pipeline.js";
import { measured } from "../telemetry/span-outcome.js";
import { metaSetter } from "../telemetry/trace-context.js";

/**
 * The hub's CLIENT spans: one per request sent to a server for a call, a child of whatever span
 * is active (the gateway's SERVER span; none for a library's own `hub.callTool`, which then
 * starts a trace), with its context injected into the request's `params._meta` (stdio included)
 * so the server's spans join the trace. Records `mcp.client.operation.duration`.
 */
export function clientSpans(options: {
  tracer: Tracer;
  duration: Histogram;
  captureContent: boolean;
  propagator: TextMapPropagator;
}): Interceptor {
  const { tracer, duration, captureContent, propagator } = options;
  return (next) => async (call) => {
    const { method, params } = call;
    const name =
      typeof params.name === "string" ? params.name : typeof params.uri === "string" ? params.uri : undefined;
    const attributes: Record<string, string> = {
      "mcp.method.name": method,
      "mcplex.server": call.target?.server ?? "",
    };
    if (method === "tools/call" && name !== undefined) {
      attributes["gen_ai.tool.name"] = name;
      attributes["gen_ai.operation.name"] = "execute_tool";
    } else if (method === "prompts/get" && name !== undefined) attributes["gen_ai.prompt.name"] = name;
    else if (method === "resources/read" && name !== undefined) attributes["mcp.resource.uri"] = name;
    if (captureContent && method === "tools/call" && params.arguments !== undefined)
      attributes["gen_ai.tool.call.arguments"] = JSON.stringify(params.arguments);
    const active = context.active();
    const span = tracer.startSpan(
      name === undefined ? method : `${method} ${name}`,
      { kind: SpanKind.CLIENT, attributes },
      active,
    );
    const meta: Record<string, unknown> = { ...(params._meta as Record<string, unknown> | undefined) };
    propagator.inject(trace.setSpan(active, span), meta, metaSetter);
    const metric: Record<string, string> = { "mcp.method.name": method };
    if (attributes["gen_ai.tool.name"] !== undefined)
      metric["gen_ai.tool.name"] = attributes["gen_ai.tool.name"];
    return measured(
      span,
      duration,
      metric,
      () => next({ ...call, params: { ...params, _meta: meta } }),
      captureContent && method === "tools/call"
        ? (result) =>
            span.setAttribute(
              "gen_ai.tool.call.result",
              JSON.stringify((result as { content?: unknown })?.content),
            )
        : undefined,
    );
  };
}
