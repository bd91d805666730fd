import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configOf, fixture, stdio } from "../support/config.js";
import {
  type InProcessGateway,
  postRev2026,
  rawHttp,
  rev2026Request,
  startGateway,
} from "../support/gateway.js";

// /healthz (liveness), /readyz (per-upstream readiness) and /metrics (Prometheus text) of the
// HTTP front, with a healthy fixture upstream and with an upstream whose command is missing.

/** The value of the sample `name{labels...}` in Prometheus text, or undefined when absent. */
function sample(body: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of body.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const found = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v))
      return Number(line.slice(line.lastIndexOf(" ")));
  }
  return undefined;
}

const get = (url: string) => rawHttp(url, { method: "GET" });

describe("with a ready upstream", () => {
  let gw: InProcessGateway;
  beforeAll(async () => {
    gw = await startGateway(configOf([fixture("fx")]));
  });
  afterAll(() => gw?.stop());

  it("answers /healthz with 200", async () => {
    const res = await get(`${gw.origin}/healthz`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: "ok" });
  });

  it("answers /readyz with 200 and the state of each upstream", async () => {
    const res = await get(`${gw.origin}/readyz`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: "ok", servers: [{ name: "fx", state: "ready" }] });
  });

  it("counts requests in /metrics as mcplex_requests_total by method, server, tool and outcome", async () => {
    const call = (id: number, name: string) =>
      postRev2026(gw.url, rev2026Request(id, "tools/call", { name, arguments: { message: "m" } }));
    await call(1, "fx__echo");
    await call(2, "fx__echo");
    await call(3, "fx__fail");
    await postRev2026(gw.url, rev2026Request(4, "tools/list"));
    const res = await get(`${gw.origin}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    expect(res.body).toContain("# TYPE mcplex_requests_total counter");
    const series = { method: "tools/call", server: "fx", tool: "fx__echo" };
    expect(sample(res.body, "mcplex_requests_total", { ...series, outcome: "ok" })).toBe(2);
    expect(sample(res.body, "mcplex_requests_total", { tool: "fx__fail", outcome: "tool_error" })).toBe(1);
    expect(sample(res.body, "mcplex_requests_total", { method: "tools/list", outcome: "ok" })).toBe(1);
    expect(sample(res.body, "mcplex_upstream_state", { server: "fx", state: "ready" })).toBe(1);
  });

  it("answers other paths with 404 naming the MCP endpoint", async () => {
    const res = await get(`${gw.origin}/nope`);
    expect(res.status).toBe(404);
    expect(res.body).toContain("/mcp");
  });
});

describe("when no upstream can start", () => {
  let gw: InProcessGateway;
  beforeAll(async () => {
    gw = await startGateway(configOf([stdio("ghost", "/nonexistent/mcp-server-that-is-not-there")]));
  });
  afterAll(() => gw?.stop());

  it("still answers /healthz with 200 (the process is alive)", async () => {
    expect((await get(`${gw.origin}/healthz`)).status).toBe(200);
  });

  it("answers /readyz with 503, the upstream's state and why", async () => {
    const res = await get(`${gw.origin}/readyz`);
    expect(res.status).toBe(503);
    const report = res.json as {
      status: string;
      servers: Array<{ name: string; state: string; error?: string }>;
    };
    expect(report.status).toBe("down");
    expect(report.servers).toHaveLength(1);
    expect(report.servers[0]).toMatchObject({ name: "ghost", state: expect.not.stringMatching(/^ready$/) });
    expect(report.servers[0]?.error).toEqual(expect.any(String));
  });

  it("says in /readyz why the upstream failed: the command that was not found", async () => {
    const res = await get(`${gw.origin}/readyz`);
    expect(res.body).toContain("ghost");
    expect(res.body).toMatch(/mcp-server-that-is-not-there.*not found/);
  });
});
