import { register as globalRegistry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { GatewayMetrics } from "../../src/gateway/metrics.js";
import { Hub, type ServerStatus } from "../../src/hub/hub.js";
import { healthReport } from "../../src/telemetry/health-report.js";
import { configOf, fixture, stdio } from "../support/config.js";
import { nextEvent } from "../support/wait.js";

/** The value of the sample `name{labels...}` in Prometheus text, or undefined when absent. */
function sample(body: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of body.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const found = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v))
      return Number(line.slice(line.lastIndexOf(" ")));
  }
  return undefined;
}

const render = async (metrics: GatewayMetrics) => (await metrics.render()).body;

describe("GatewayMetrics", () => {
  it("counts requests by method, server, tool and outcome", async () => {
    const metrics = new GatewayMetrics({ processMetrics: false });
    const call = { method: "tools/call", server: "fx", tool: "fx__echo", seconds: 0.01 };
    metrics.observeRequest({ ...call, outcome: "ok" });
    metrics.observeRequest({ ...call, outcome: "ok" });
    metrics.observeRequest({ ...call, outcome: "tool_error" });
    metrics.observeRequest({ ...call, outcome: "error" });
    metrics.observeRequest({ method: "tools/list", outcome: "ok", seconds: 0.001 });
    const body = await render(metrics);
    const series = { method: "tools/call", server: "fx", tool: "fx__echo" };
    expect(sample(body, "mcplex_requests_total", { ...series, outcome: "ok" })).toBe(2);
    expect(sample(body, "mcplex_requests_total", { ...series, outcome: "tool_error" })).toBe(1);
    expect(sample(body, "mcplex_requests_total", { ...series, outcome: "error" })).toBe(1);
    expect(
      sample(body, "mcplex_requests_total", { method: "tools/list", server: "", tool: "", outcome: "ok" }),
    ).toBe(1);
    expect(sample(body, "mcplex_request_duration_seconds_count", series)).toBe(4);
    expect(sample(body, "mcplex_request_duration_seconds_sum", series)).toBeCloseTo(0.04);
  });

  it("keeps counting requests across renders, each render showing the running total", async () => {
    const metrics = new GatewayMetrics({ processMetrics: false });
    const ok = { method: "ping", outcome: "ok", seconds: 0 } as const;
    metrics.observeRequest(ok);
    metrics.observeRequest(ok);
    const first = await render(metrics);
    expect(sample(first, "mcplex_requests_total", { method: "ping", outcome: "ok" })).toBe(2);
    // Rendered again with nothing new: the same total, not twice it nor none.
    expect(sample(await render(metrics), "mcplex_requests_total", { method: "ping", outcome: "ok" })).toBe(2);
    metrics.observeRequest(ok);
    metrics.observeRequest({ ...ok, outcome: "error" });
    const third = await render(metrics);
    expect(sample(third, "mcplex_requests_total", { method: "ping", outcome: "ok" })).toBe(3);
    expect(sample(third, "mcplex_requests_total", { method: "ping", outcome: "error" })).toBe(1);
    expect(sample(third, "mcplex_request_duration_seconds_count", { method: "ping" })).toBe(4);
  });

  it("puts durations in buckets from half a millisecond to a minute", async () => {
    const metrics = new GatewayMetrics({ processMetrics: false });
    metrics.observeRequest({ method: "ping", outcome: "ok", seconds: 0.0003 });
    metrics.observeRequest({ method: "ping", outcome: "ok", seconds: 45 });
    metrics.observeRequest({ method: "ping", outcome: "ok", seconds: 120 });
    const body = await render(metrics);
    const bucket = (le: string) =>
      sample(body, "mcplex_request_duration_seconds_bucket", { method: "ping", le });
    expect(bucket("0.0005")).toBe(1);
    expect(bucket("30")).toBe(1);
    expect(bucket("60")).toBe(2);
    expect(bucket("+Inf")).toBe(3);
  });

  it("records methods outside MCP as other, so clients cannot grow the label set", async () => {
    const metrics = new GatewayMetrics({ processMetrics: false });
    metrics.observeRequest({ method: "made/up-1", outcome: "error", seconds: 0 });
    metrics.observeRequest({ method: "made/up-2", outcome: "error", seconds: 0 });
    const body = await render(metrics);
    expect(sample(body, "mcplex_requests_total", { method: "other", outcome: "error" })).toBe(2);
    expect(body).not.toContain("made/up");
  });

  it("folds new tools into one series past maxSeries", async () => {
    const metrics = new GatewayMetrics({ processMetrics: false, maxSeries: 2 });
    for (const tool of ["a", "b", "c", "d", "a"]) {
      metrics.observeRequest({ method: "tools/call", server: "s", tool, outcome: "ok", seconds: 0 });
    }
    const body = await render(metrics);
    expect(sample(body, "mcplex_requests_total", { tool: "a", outcome: "ok" })).toBe(2);
    expect(sample(body, "mcplex_requests_total", { tool: "b", outcome: "ok" })).toBe(1);
    expect(sample(body, "mcplex_requests_total", { tool: "other", outcome: "ok" })).toBe(2);
    expect(sample(body, "mcplex_requests_total", { tool: "c" })).toBeUndefined();
  });

  it("reports sessions per transport and listen streams", async () => {
    const metrics = new GatewayMetrics({ processMetrics: false });
    metrics.setSessions("http", 3);
    metrics.setSessions("websocket", 1);
    metrics.setSessions("http", 2);
    metrics.setListenStreams(4);
    const body = await render(metrics);
    expect(sample(body, "mcplex_active_sessions", { transport: "http" })).toBe(2);
    expect(sample(body, "mcplex_active_sessions", { transport: "websocket" })).toBe(1);
    expect(sample(body, "mcplex_listen_streams")).toBe(4);
  });

  it("keeps its own registry: two instances never collide and the global one stays empty", async () => {
    const a = new GatewayMetrics({ processMetrics: false });
    const b = new GatewayMetrics({ processMetrics: false });
    a.observeRequest({ method: "ping", outcome: "ok", seconds: 0 });
    expect(sample(await render(a), "mcplex_requests_total", { method: "ping" })).toBe(1);
    expect(sample(await render(b), "mcplex_requests_total", { method: "ping" })).toBeUndefined();
    expect(await globalRegistry.metrics()).not.toContain("mcplex_");
  });

  it("adds process metrics unless told not to, in Prometheus text format", async () => {
    const withProcess = await new GatewayMetrics().render();
    expect(withProcess.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(sample(withProcess.body, "process_cpu_user_seconds_total")).toBeGreaterThanOrEqual(0);
    expect(withProcess.body).toContain("mcplex_listen_streams");
    // A second instance shares the process collectors rather than registering them again.
    expect((await new GatewayMetrics().render()).body).toContain("process_cpu_user_seconds_total");
    expect(await render(new GatewayMetrics({ processMetrics: false }))).not.toContain("process_cpu");
  });
});

describe("GatewayMetrics.trackHub with a real hub", () => {
  const hubs: Hub[] = [];
  afterEach(async () => {
    await Promise.all(hubs.splice(0).map((h) => h.close()));
  });

  const state = (body: string, server: string) =>
    ["idle", "starting", "ready", "failed", "reconnecting", "stopped", "disabled"].filter(
      (s) => sample(body, "mcplex_upstream_state", { server, state: s }) === 1,
    );

  it("follows a server from stopped to ready to stopped", async () => {
    const hub = new Hub({ config: configOf([fixture("fx"), fixture("off", [], { enabled: false })]) });
    hubs.push(hub);
    const metrics = new GatewayMetrics({ processMetrics: false });
    const untrack = metrics.trackHub(hub);
    let body = await render(metrics);
    expect(state(body, "fx")).toEqual(["stopped"]);
    expect(state(body, "off")).toEqual(["disabled"]);
    expect(sample(body, "mcplex_upstream_reconnects_total", { server: "fx" })).toBe(0);

    await hub.start();
    body = await render(metrics);
    expect(state(body, "fx")).toEqual(["ready"]);
    expect(sample(body, "mcplex_upstream_state", { server: "fx", state: "stopped" })).toBe(0);

    await hub.close();
    expect(state(await render(metrics), "fx")).toEqual(["stopped"]);
    untrack();
  });

  it("counts a reconnect when a killed server comes back", async () => {
    const hub = new Hub({ config: configOf([fixture("fx")]), backoff: { initial: 100, max: 200 } });
    hubs.push(hub);
    const metrics = new GatewayMetrics({ processMetrics: false });
    metrics.trackHub(hub);
    await hub.start();
    const pid = hub.servers()[0]?.pid;
    expect(pid).toBeGreaterThan(0);
    const down = nextEvent(hub, (e) => e.type === "server-state" && e.state === "reconnecting");
    const back = nextEvent(hub, (e) => e.type === "server-state" && e.state === "ready");
    process.kill(pid!, "SIGKILL");
    await down;
    expect(state(await render(metrics), "fx")).toEqual(["reconnecting"]);
    await back;
    const body = await render(metrics);
    expect(state(body, "fx")).toEqual(["ready"]);
    expect(sample(body, "mcplex_upstream_reconnects_total", { server: "fx" })).toBe(1);
  });

  it("drops the series of a removed server and picks up an added one", async () => {
    const hub = new Hub({ config: configOf([fixture("fx")]) });
    hubs.push(hub);
    const metrics = new GatewayMetrics({ processMetrics: false });
    metrics.trackHub(hub);
    await hub.start();
    await hub.addServer(stdio("late", "mcplex-no-such-command", [], { lazy: true }));
    expect(state(await render(metrics), "late")).toEqual(["idle"]);
    await hub.removeServer("fx");
    const body = await render(metrics);
    expect(sample(body, "mcplex_upstream_state", { server: "fx" })).toBeUndefined();
    expect(sample(body, "mcplex_upstream_reconnects_total", { server: "fx" })).toBeUndefined();
  });
});

describe("healthReport", () => {
  const status = (name: string, state: ServerStatus["state"], extra: Partial<ServerStatus> = {}) =>
    ({ name, state, enabled: state !== "disabled", lazy: false, ...extra }) as ServerStatus;
  const report = (...servers: ServerStatus[]) => healthReport({ servers: () => servers });

  it("is ok when every enabled server is ready, ignoring disabled ones", () => {
    expect(report(status("a", "ready"), status("b", "disabled"))).toEqual({
      status: "ok",
      servers: [
        { name: "a", state: "ready" },
        { name: "b", state: "disabled" },
      ],
    });
  });

  it("is degraded when some are not ready, with their error and retry time", () => {
    const result = report(
      status("a", "ready"),
      status("b", "reconnecting", { error: "b: connection closed", retryAt: 1234, pid: 7 }),
    );
    expect(result.status).toBe("degraded");
    expect(result.servers[1]).toEqual({
      name: "b",
      state: "reconnecting",
      error: "b: connection closed",
      retryAt: 1234,
    });
  });

  it("is down when no enabled server is ready", () => {
    expect(report(status("a", "failed"), status("b", "starting")).status).toBe("down");
  });

  it("counts lazy servers not started yet as healthy, and an empty hub as ok", () => {
    expect(report(status("a", "idle", { lazy: true }), status("b", "stopped", { lazy: true })).status).toBe(
      "ok",
    );
    expect(report(status("a", "stopped")).status).toBe("down");
    expect(report().status).toBe("ok");
    expect(report(status("off", "disabled")).status).toBe("ok");
  });

  it("reports a real hub with a broken server as degraded, without its config", async () => {
    const hub = new Hub({
      config: configOf([
        fixture("good", [], { env: { API_KEY: "hunter2-secret" } } as never),
        stdio("missing", "mcplex-no-such-command", [], { env: { TOKEN: "hunter2-secret" } } as never),
      ]),
    });
    try {
      expect(healthReport(hub).status).toBe("down");
      await hub.start();
      const result = healthReport(hub);
      expect(result.status).toBe("degraded");
      expect(result.servers.find((s) => s.name === "missing")).toMatchObject({ state: "failed" });
      expect(result.servers.find((s) => s.name === "missing")?.error).toMatch(/mcplex-no-such-command/);
      expect(JSON.stringify(result)).not.toContain("hunter2");
    } finally {
      await hub.close();
    }
  });
});
