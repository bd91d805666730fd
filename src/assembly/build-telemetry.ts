import type { McplexConfig } from "../config/types.js";
import { telemetrySettings } from "../telemetry/settings.js";
import type { Telemetry } from "./telemetry.js";

/**
 * Traces and metrics over OTLP, started when the config's `telemetry:` block or `OTEL_*`
 * variables turn them on; then, and only then, their code is loaded. `undefined` when off.
 */
export async function buildTelemetry(config: McplexConfig): Promise<Telemetry | undefined> {
  const settings = telemetrySettings(config.telemetry);
  return settings === undefined ? undefined : (await import("./telemetry.js")).startTelemetry(settings);
}
