import { describe, expect, it } from "vitest";
import { telemetrySettings } from "../../src/telemetry/settings.js";

describe("telemetrySettings", () => {
  it("is off unless the config or an OTLP endpoint variable turns it on", () => {
    expect(telemetrySettings(undefined, {})).toBeUndefined();
    expect(telemetrySettings({ endpoint: "http://collector:4318" }, {})).toBeUndefined();
    expect(telemetrySettings({ enabled: true }, {})?.tracesUrl).toBe("http://localhost:4318/v1/traces");
    expect(telemetrySettings(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" })).toMatchObject({
      tracesUrl: "http://c:4318/v1/traces",
      metricsUrl: "http://c:4318/v1/metrics",
      serviceName: "mcplex",
      captureContent: false,
      sampleRatio: 1,
    });
  });

  it("follows the standard variables, and lets the config and OTEL_SDK_DISABLED turn it off", () => {
    const env = {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t:4318/traces",
      OTEL_SERVICE_NAME: "gateway-a",
      OTEL_TRACES_SAMPLER_ARG: "0.5",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20abc,x-team=core",
    };
    expect(telemetrySettings(undefined, env)).toMatchObject({
      tracesUrl: "http://t:4318/traces",
      serviceName: "gateway-a",
      sampleRatio: 0.5,
      headers: { authorization: "Bearer abc", "x-team": "core" },
    });
    expect(telemetrySettings({ enabled: false }, env)).toBeUndefined();
    expect(telemetrySettings({ enabled: true }, { OTEL_SDK_DISABLED: "true" })).toBeUndefined();
  });
});
