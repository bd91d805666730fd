import { context, type Meter, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type { AgentTracer } from "../agent/run-agent.js";
import type { Interceptor } from "../hub/call-pipeline.js";
import { clientSpans } from "../interceptors/client-spans.js";
import { serverSpans } from "../interceptors/server-spans.js";
import type { ToolChange } from "../pins/tool-pins.js";
import type { TelemetrySettings } from "../telemetry/settings.js";

/** Running telemetry: the interceptors that record it, and the flush on the way out. */
export interface Telemetry {
  /** SERVER spans and `mcp.server.operation.duration`, outermost on the gateway's pipeline (`GatewayOptions.outer`). */
  readonly gateway: Interceptor;
  /**
   * CLIENT spans, `mcp.client.operation.duration` and trace context into upstream `_meta`
   * (`HubOptions.upstreamInterceptors`).
   */
  readonly upstream: Interceptor;
  /** Spans of the agent loop: a run, its model requests and tool calls (`runAgent`'s `tracer`). */
  readonly agent: AgentTracer;
  /**
   * Records that a pinned server's tools differ from those approved (a hub `pin-changes` event):
   * a span `mcplex pin-changes` with one `mcplex.pin.change` event per tool changed, added or
   * removed (its name, kind, whether it is held, the fields that differ, the fingerprints).
   */
  pinChanges(server: string, changes: readonly ToolChange[]): void;
  /** The trace id of the active span (inside {@link gateway}: the request's), for the audit trail. */
  traceId(): string | undefined;
  /** Exports what is buffered, then stops. */
  shutdown(): Promise<void>;
}

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60, 300];

/**
 * Starts OpenTelemetry with `settings`: traces and metrics over OTLP/HTTP, W3C trace context
 * and baggage. Its providers are mcplex's own (nothing is registered globally but the async
 * context manager, and only when the process has none). This module is loaded only when
 * telemetry is on: with it off nothing of OpenTelemetry is imported.
 */
export function startTelemetry(settings: TelemetrySettings): Telemetry {
  // Spans must stay active across awaits for the hub's spans to find the gateway's.
  const manager = new AsyncLocalStorageContextManager().enable();
  if (!context.setGlobalContextManager(manager)) manager.disable(); // the process has one already
  const resource = resourceFromAttributes({ "service.name": settings.serviceName });
  const tracerProvider = new TracerProvider({
    resource,
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.sampleRatio) }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: settings.tracesUrl, headers: settings.headers }),
        scheduledDelayMillis: settings.spanDelayMs,
      }),
    ],
  });
  const meterProvider = new MeterProvider({
    resource,
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: settings.metricsUrl, headers: settings.headers }),
        exportIntervalMillis: settings.metricsIntervalMs,
      }),
    ],
  });
  const tracer = tracerProvider.getTracer("mcplex");
  const meter: Meter = meterProvider.getMeter("mcplex");
  const histogram = (name: string, description: string) =>
    meter.createHistogram(name, { unit: "s", description, advice: { explicitBucketBoundaries: BUCKETS } });
  const propagator = new CompositePropagator({
    propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
  });
  const captureContent = settings.captureContent;
  return {
    gateway: serverSpans({
      tracer,
      duration: histogram("mcp.server.operation.duration", "Time the gateway took to answer an MCP request"),
      captureContent,
      propagator,
    }),
    upstream: clientSpans({
      tracer,
      duration: histogram("mcp.client.operation.duration", "Time an MCP server took to answer the hub"),
      captureContent,
      propagator,
    }),
    agent: {
      span: (name, attributes, work) =>
        tracer.startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes }, async (span) => {
          try {
            return await work();
          } catch (error) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
            throw error;
          } finally {
            span.end();
          }
        }),
    },
    pinChanges(server, changes) {
      const held = changes.filter((c) => c.held).length;
      const span = tracer.startSpan("mcplex pin-changes", {
        kind: SpanKind.INTERNAL,
        attributes: {
          "mcplex.server": server,
          "mcplex.pin.changes": changes.length,
          "mcplex.pin.held": held,
        },
      });
      for (const change of changes) {
        const attributes: Record<string, string | boolean> = {
          "gen_ai.tool.name": change.tool,
          "mcplex.pin.kind": change.kind,
          "mcplex.pin.held": change.held,
          "mcplex.pin.fields": change.fields.map((f) => f.field).join(","),
        };
        if (change.pinned !== undefined) attributes["mcplex.pin.fingerprint.approved"] = change.pinned;
        if (change.current !== undefined) attributes["mcplex.pin.fingerprint.listed"] = change.current;
        span.addEvent("mcplex.pin.change", attributes);
      }
      // Held tools are a state to look at, not a failed operation: the span's status stays unset.
      span.end();
    },
    traceId: () => trace.getActiveSpan()?.spanContext().traceId,
    async shutdown() {
      await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}
