import type { TelemetryConfig } from "../config/types.js";

/** What telemetry exports, where, and how much, once it is on. */
export interface TelemetrySettings {
  /** OTLP/HTTP traces URL (`.../v1/traces`). */
  tracesUrl: string;
  /** OTLP/HTTP metrics URL (`.../v1/metrics`). */
  metricsUrl: string;
  serviceName: string;
  captureContent: boolean;
  sampleRatio: number;
  headers: Record<string, string>;
  /** How often metrics are exported (ms). */
  metricsIntervalMs: number;
  /** How long finished spans wait to be exported in a batch (ms). */
  spanDelayMs: number;
}

const DEFAULT_ENDPOINT = "http://localhost:4318";

/**
 * Whether telemetry is on, and with what: the `telemetry:` block, then the standard `OTEL_*`
 * variables (`OTEL_SDK_DISABLED`, `OTEL_EXPORTER_OTLP_ENDPOINT`, `..._TRACES_ENDPOINT`,
 * `..._METRICS_ENDPOINT`, `..._HEADERS`, `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER_ARG`,
 * `OTEL_METRIC_EXPORT_INTERVAL`, `OTEL_BSP_SCHEDULE_DELAY`). Off (`undefined`) unless the block says `enabled: true` or
 * an OTLP endpoint variable is set: nothing of OpenTelemetry is loaded then.
 */
export function telemetrySettings(
  config: TelemetryConfig | undefined,
  env: NodeJS.ProcessEnv = process.env,
): TelemetrySettings | undefined {
  if (env.OTEL_SDK_DISABLED === "true" || config?.enabled === false) return undefined;
  const named =
    env.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined;
  if (config?.enabled !== true && !named) return undefined;
  const base = (config?.endpoint ?? env.OTEL_EXPORTER_OTLP_ENDPOINT ?? DEFAULT_ENDPOINT).replace(/\/+$/, "");
  const ratio = Number(env.OTEL_TRACES_SAMPLER_ARG);
  const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
  const delay = Number(env.OTEL_BSP_SCHEDULE_DELAY);
  return {
    tracesUrl:
      config?.endpoint === undefined && env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined
        ? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
        : `${base}/v1/traces`,
    metricsUrl:
      config?.endpoint === undefined && env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT !== undefined
        ? env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT
        : `${base}/v1/metrics`,
    serviceName: config?.serviceName ?? env.OTEL_SERVICE_NAME ?? "mcplex",
    captureContent: config?.captureContent ?? false,
    sampleRatio: config?.sampleRatio ?? (ratio >= 0 && ratio <= 1 ? ratio : 1),
    headers: { ...parseHeaders(env.OTEL_EXPORTER_OTLP_HEADERS), ...config?.headers },
    metricsIntervalMs: interval > 0 ? interval : 60_000,
    spanDelayMs: delay > 0 ? delay : 5000,
  };
}

/** `OTEL_EXPORTER_OTLP_HEADERS`: `key=value,key2=value2`, values URL-encoded. */
function parseHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    headers[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
}
