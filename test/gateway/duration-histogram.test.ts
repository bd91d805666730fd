import { Histogram, Registry, type RegistryContentType } from "prom-client";
import { describe, expect, it } from "vitest";
import { DurationHistogram } from "../../src/gateway/duration-histogram.js";

const BOUNDS = [0.0005, 0.001, 0.01, 0.5, 1, 60];

/** prom-client's own Histogram and ours, each in a registry, given the same observations. */
function both() {
  const theirs = new Registry<RegistryContentType>();
  const ours = new Registry<RegistryContentType>();
  const histogram = new Histogram({
    name: "x_seconds",
    help: "Durations.",
    labelNames: ["method", "server", "tool"],
    buckets: BOUNDS,
    registers: [theirs],
  });
  const duration = new DurationHistogram("x_seconds", "Durations.", BOUNDS);
  ours.registerMetric(duration as unknown as Histogram);
  const series = new Map<string, ReturnType<DurationHistogram["series"]>>();
  const observe = (labels: { method: string; server: string; tool: string }, seconds: number) => {
    histogram.labels(labels).observe(seconds);
    const key = JSON.stringify(labels);
    if (!series.has(key)) series.set(key, duration.series(labels));
    series.get(key)!.observe(seconds);
  };
  for (const [labels, seconds] of [
    [{ method: "ping", server: "", tool: "" }, 0.0003],
    [{ method: "ping", server: "", tool: "" }, 0.001],
    [{ method: "tools/call", server: "s", tool: "s__t" }, 45],
    [{ method: "tools/call", server: "s", tool: "s__t" }, 120],
    [{ method: "ping", server: "", tool: "" }, 0.5],
  ] as const)
    observe(labels, seconds);
  return { theirs, ours };
}

describe("DurationHistogram", () => {
  it("writes the Prometheus text, OpenMetrics text and JSON prom-client's Histogram writes", async () => {
    const { theirs, ours } = both();
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(JSON.stringify(await ours.getMetricsAsJSON())).toBe(
      JSON.stringify(await theirs.getMetricsAsJSON()),
    );
    theirs.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    ours.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it("drops its samples on the registry's reset, as prom-client's does", async () => {
    const { theirs, ours } = both();
    theirs.resetMetrics();
    ours.resetMetrics();
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).not.toContain("x_seconds_count");
  });
});
