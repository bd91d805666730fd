import {
  type Context,
  type Histogram,
  context as otelContext,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  type TextMapPropagator,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { Identity, Interceptor, LayerDecision, RequestTarget } from "../hub/call-pipeline.js";
import { measured } from "../telemetry/span-outcome.js";
import { metaGetter } from "../telemetry/trace-context.js";

/** The span name's target and the attributes that name it, per the MCP semantic conventions. */
export function targetAttributes(
  method: string,
  target: RequestTarget | undefined,
): {
  name: string | undefined;
  attributes: Record<string, string>;
} {
  if (target === undefined) return { name: undefined, attributes: {} };
  switch (target.kind) {
    case "tool":
      return {
        name: target.name,
        attributes:
          method === "tools/call"
            ? { "gen_ai.tool.name": target.name, "gen_ai.operation.name": "execute_tool" }
            : { "gen_ai.tool.name": target.name },
      };
    case "prompt":
      return { name: target.name, attributes: { "gen_ai.prompt.name": target.name } };
    case "resource":
      return { name: target.uri, attributes: { "mcp.resource.uri": target.uri } };
    case "server":
      return { name: target.name, attributes: {} };
    case "task":
      // A handle is long and new for every task: not a span name.
      return { name: undefined, attributes: {} };
  }
}

/**
 * The gateway's SERVER spans: one per request, named `{mcp.method.name} {target}`, a child of
 * the trace context the client sent in `params._meta` (or its HTTP headers), or for a request
 * made inside another (a composite's or a script's inner call) of that request's span, active while the
 * request runs so that the hub's CLIENT spans are its children. Names the caller (`enduser.id`,
 * see {@link endUser}). Records `mcp.server.operation.duration`, whose attributes never name
 * the caller.
 */
export function serverSpans(options: {
  tracer: Tracer;
  duration: Histogram;
  captureContent: boolean;
  propagator: TextMapPropagator;
}): Interceptor {
  const { tracer, duration, captureContent, propagator } = options;
  return (next) => async (request) => {
    const { method, params, context: ctx, target } = request;
    // A request made while another's span is active is that request's inner call (a meta-tool's,
    // a code-mode script's, a composite tool's): its span is a child of that one. Any other
    // request is a child of the trace context its client sent.
    const active = otelContext.active();
    const parent: Context =
      trace.getSpan(active) !== undefined
        ? active
        : propagator.extract(
            ROOT_CONTEXT,
            { meta: params._meta as Record<string, unknown> | undefined, headers: ctx.headers },
            metaGetter,
          );
    const named = targetAttributes(method, target);
    const attributes: Record<string, string> = {
      "mcp.method.name": method,
      "mcp.protocol.version": ctx.protocolVersion,
      "jsonrpc.request.id": String(request.id),
      ...named.attributes,
    };
    if (!ctx.stateless && ctx.sessionId !== undefined) attributes["mcp.session.id"] = ctx.sessionId;
    const user = endUser(ctx.identity);
    if (user !== undefined) attributes["enduser.id"] = user;
    if (captureContent && method === "tools/call" && params.arguments !== undefined)
      attributes["gen_ai.tool.call.arguments"] = JSON.stringify(params.arguments);
    const span = tracer.startSpan(
      named.name === undefined ? method : `${method} ${named.name}`,
      { kind: SpanKind.SERVER, attributes },
      parent,
    );
    // Never the user: a metric's labels stay few (bounded cardinality); spans may name one.
    const metric: Record<string, string> = {
      "mcp.method.name": method,
      "mcp.protocol.version": ctx.protocolVersion,
    };
    if (named.attributes["gen_ai.tool.name"] !== undefined)
      metric["gen_ai.tool.name"] = named.attributes["gen_ai.tool.name"];
    // Those already taken belong to the request this one is an inner call of.
    const decided = ctx.decisions?.length ?? 0;
    return measured(
      span,
      duration,
      metric,
      () =>
        otelContext
          .with(trace.setSpan(parent, span), () => next(request))
          .finally(() => decisionEvents(span, ctx.decisions, decided)),
      captureContent && method === "tools/call"
        ? (result) =>
            span.setAttribute(
              "gen_ai.tool.call.result",
              JSON.stringify(result.content ?? result.structuredContent),
            )
        : undefined,
    );
  };
}

/**
 * What layers decided while the request ran (a policy rule that held, with its effect), as
 * `mcplex.decision` events of its span, in order.
 */
function decisionEvents(span: Span, decisions: readonly LayerDecision[] | undefined, from: number): void {
  if (decisions === undefined) return;
  for (let i = from; i < decisions.length; i++) {
    const d = decisions[i]!;
    const attributes: Record<string, string> = {
      "mcplex.decision.by": d.by,
      "mcplex.decision.name": d.name,
      "mcplex.decision.effect": d.effect,
      "mcplex.decision.phase": d.phase,
    };
    if (d.target !== undefined) attributes["mcplex.decision.target"] = d.target;
    if (d.missing !== undefined) attributes["mcplex.decision.missing"] = d.missing.join(" ");
    if (d.error !== undefined) attributes["mcplex.decision.error"] = d.error;
    span.addEvent("mcplex.decision", attributes);
  }
}

/**
 * `enduser.id` of a request: the signed-in user, else a static token's key (`token#0`, never the
 * token). An anonymous caller's key is its address, which names no user: none then.
 */
export function endUser(identity: Identity | undefined): string | undefined {
  if (identity === undefined) return undefined;
  if (identity.subject !== undefined) return identity.subject;
  return identity.via === "token" ? identity.key : undefined;
}
