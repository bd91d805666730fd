import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAgent } from "../../src/agent/run-agent.js";
import { serve } from "../../src/assembly/serve.js";
import { startTelemetry } from "../../src/assembly/telemetry.js";
import type { Authenticator } from "../../src/fronts/authenticator.js";
import type { Identity } from "../../src/hub/call-pipeline.js";
import { Hub } from "../../src/hub/hub.js";
import { telemetrySettings } from "../../src/telemetry/settings.js";
import { startMockLlmServer } from "../../src/testing/mock-llm-server.js";
import { configOf, stdio } from "../support/config.js";
import { resultText } from "../support/gateway.js";
import { modulesLoaded } from "../support/modules-loaded.js";

// One trace from the client through mcplex to the server: the client's traceparent in _meta is
// the parent of the gateway's SERVER span, whose child is the hub's CLIENT span, whose context
// the server receives in its request's _meta. Spans and metrics go over OTLP/HTTP to a receiver
// here that decodes them.

interface Received {
  path: string;
  body: unknown;
}
let receiver: Server;
let endpoint: string;
const received: Received[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ path: req.url ?? "", body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => receiver.close(() => r())));

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, string>;
}

function spans(): Span[] {
  const out: Span[] = [];
  for (const { path, body } of received) {
    if (path !== "/v1/traces") continue;
    for (const rs of (body as { resourceSpans: Array<{ scopeSpans: Array<{ spans: any[] }> }> })
      .resourceSpans)
      for (const ss of rs.scopeSpans)
        for (const s of ss.spans)
          out.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId || undefined,
            name: s.name,
            kind: s.kind,
            attributes: Object.fromEntries(
              (s.attributes as Array<{ key: string; value: Record<string, unknown> }>).map((a) => [
                a.key,
                String(Object.values(a.value)[0]),
              ]),
            ),
          });
  }
  return out;
}

function metricNames(): string[] {
  const names: string[] = [];
  for (const { path, body } of received) {
    if (path !== "/v1/metrics") continue;
    for (const rm of (body as { resourceMetrics: any[] }).resourceMetrics)
      for (const sm of rm.scopeMetrics) for (const m of sm.metrics) names.push(m.name);
  }
  return names;
}

const META_SERVER = ["test/fixtures/servers/meta-server.ts"];
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";

describe("OpenTelemetry tracing", () => {
  it("links client, gateway SERVER span, hub CLIENT span and server in one trace, over OTLP/HTTP", async () => {
    const running = await serve({
      config: configOf([stdio("meta", "node_modules/.bin/tsx", META_SERVER)], {
        telemetry: { enabled: true, endpoint, serviceName: "mcplex-test" },
      }),
      transport: "http",
      http: { port: 0, dashboard: false },
      watch: false,
    });
    await running.started;
    const client = new Client(
      { name: "traced", version: "1.0.0" },
      { versionNegotiation: { mode: "legacy" } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(running.http!.url)));
    let seen: Record<string, string>;
    try {
      const traceparent = `00-${TRACE_ID}-${CLIENT_SPAN}-01`;
      seen = JSON.parse(
        resultText(await client.callTool({ name: "meta__meta", arguments: {}, _meta: { traceparent } })),
      ) as Record<string, string>;
      const failed = await client.callTool({ name: "meta__fail", arguments: {}, _meta: { traceparent } });
      expect(failed.isError).toBe(true);
    } finally {
      await client.close();
      await running.close(0); // flushes spans and metrics
    }

    const all = spans();
    const server = all.find((s) => s.name === "tools/call meta__meta");
    const upstream = all.find((s) => s.name === "tools/call meta");
    expect(server, JSON.stringify(all.map((s) => s.name))).toBeDefined();
    expect(upstream).toBeDefined();
    // Client -> gateway SERVER span -> hub CLIENT span -> the server's request.
    expect(server).toMatchObject({ traceId: TRACE_ID, parentSpanId: CLIENT_SPAN, kind: 2 });
    expect(upstream).toMatchObject({ traceId: TRACE_ID, parentSpanId: server!.spanId, kind: 3 });
    expect(seen!.traceparent).toBe(`00-${TRACE_ID}-${upstream!.spanId}-01`);
    expect(server!.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "meta__meta",
      "mcp.protocol.version": "2025-11-25",
      "jsonrpc.request.id": expect.any(String),
      "mcp.session.id": expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(server!.attributes["gen_ai.tool.call.arguments"]).toBeUndefined(); // content is opt-in
    expect(upstream!.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "meta",
    });
    // A tool's own error is a tool_error on both sides.
    expect(all.find((s) => s.name === "tools/call meta__fail")?.attributes["error.type"]).toBe("tool_error");
    expect(all.find((s) => s.name === "tools/call fail")?.attributes["error.type"]).toBe("tool_error");
    expect(metricNames()).toEqual(
      expect.arrayContaining(["mcp.server.operation.duration", "mcp.client.operation.duration"]),
    );
  });

  it("puts each policy rule that held on the SERVER span, as mcplex.decision events", async () => {
    received.length = 0;
    const running = await serve({
      config: {
        ...configOf([stdio("meta", "node_modules/.bin/tsx", META_SERVER)], {
          telemetry: { enabled: true, endpoint },
        }),
        policies: [
          { name: "watch-meta", when: 'request.tool == "meta__meta"', effect: "audit", phase: "request" },
          { name: "no-fail", when: 'request.tool == "meta__fail"', effect: "deny", phase: "request" },
        ],
      },
      transport: "http",
      http: { port: 0, dashboard: false },
      watch: false,
    });
    await running.started;
    const client = new Client({ name: "traced", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(running.http!.url)));
    try {
      await client.callTool({ name: "meta__meta", arguments: {} });
      await expect(client.callTool({ name: "meta__fail", arguments: {} })).rejects.toThrow(
        'denied by policy "no-fail"',
      );
    } finally {
      await client.close();
      await running.close(0); // flushes spans
    }
    const events = (name: string) => {
      for (const { path, body } of received) {
        if (path !== "/v1/traces") continue;
        for (const rs of (body as { resourceSpans: Array<{ scopeSpans: Array<{ spans: any[] }> }> })
          .resourceSpans)
          for (const ss of rs.scopeSpans)
            for (const span of ss.spans)
              if (span.name === name)
                return (span.events ?? []).map((e: { name: string; attributes: any[] }) => ({
                  name: e.name,
                  ...Object.fromEntries(e.attributes.map((a) => [a.key, String(Object.values(a.value)[0])])),
                }));
      }
      return undefined;
    };
    const decision = (name: string, effect: string, target: string) => ({
      name: "mcplex.decision",
      "mcplex.decision.by": "policy",
      "mcplex.decision.name": name,
      "mcplex.decision.effect": effect,
      "mcplex.decision.phase": "request",
      "mcplex.decision.target": target,
    });
    expect(events("tools/call meta__meta")).toEqual([decision("watch-meta", "audit", "meta__meta")]);
    expect(events("tools/call meta__fail")).toEqual([decision("no-fail", "deny", "meta__fail")]);
  });

  it("makes each inner call of a composite tool a span of its own under the composite's", async () => {
    received.length = 0;
    const running = await serve({
      config: {
        ...configOf([stdio("meta", "node_modules/.bin/tsx", META_SERVER)], {
          telemetry: { enabled: true, endpoint },
        }),
        composites: {
          twice: {
            description: "Calls meta twice.",
            inputSchema: { type: "object" },
            script: "await tools.meta.meta({}); await tools.meta.meta({}); return 'ok';",
          },
        },
      },
      transport: "http",
      http: { port: 0, dashboard: false },
      watch: false,
    });
    await running.started;
    const client = new Client({ name: "traced", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(running.http!.url)));
    try {
      const result = await client.callTool({ name: "twice", arguments: {} });
      expect(result.isError, JSON.stringify(result)).not.toBe(true);
    } finally {
      await client.close();
      await running.close(0); // flushes spans
    }
    const all = spans();
    const outer = all.find((s) => s.name === "tools/call twice")!;
    expect(outer).toBeDefined();
    const inner = all.filter((s) => s.name === "tools/call meta__meta" && s.traceId === outer.traceId);
    expect(inner).toHaveLength(2);
    for (const span of inner) expect(span.parentSpanId).toBe(outer.spanId);
  });

  it("starts a trace for a library's own hub.callTool, and sends it to the server", async () => {
    received.length = 0;
    const running = await serve({
      config: configOf([stdio("meta", "node_modules/.bin/tsx", META_SERVER)], {
        telemetry: { enabled: true, endpoint },
      }),
      transport: "http",
      http: { port: 0, dashboard: false },
      watch: false,
    });
    await running.started;
    let seen: Record<string, string>;
    try {
      seen = JSON.parse(resultText(await running.hub.callTool("meta__meta", {}))) as Record<string, string>;
    } finally {
      await running.close(0);
    }
    const upstream = spans().find((s) => s.name === "tools/call meta");
    expect(upstream?.parentSpanId).toBeUndefined();
    expect(seen!.traceparent).toBe(`00-${upstream!.traceId}-${upstream!.spanId}-01`);
  });
});

describe("who calls, in traces", () => {
  it("names the signed-in user on the SERVER span (enduser.id), never in a metric, and the audit line carries its trace", async () => {
    received.length = 0;
    const dir = await mkdtemp(join(tmpdir(), "mcplex-otel-audit-"));
    const alice: Identity = {
      key: "oauth:alice",
      via: "oauth",
      subject: "alice@example.com",
      client: "claude-code",
      scopes: ["mcp:tools"],
      operator: true,
    };
    const signedIn: Authenticator = {
      required: true,
      authenticate: async (request) =>
        request.headers.authorization === "Bearer alice-access-token"
          ? { ok: true, identity: alice }
          : { ok: false, status: 401, message: "Unauthorized", wwwAuthenticate: "Bearer" },
    };
    const running = await serve({
      config: configOf([stdio("meta", "node_modules/.bin/tsx", META_SERVER)], {
        telemetry: { enabled: true, endpoint },
        audit: { to: join(dir, "audit.log"), maxSize: 1 << 20, keep: 1, content: false },
      }),
      transport: "http",
      http: { port: 0, dashboard: false, authenticator: signedIn },
      watch: false,
    });
    try {
      await running.started;
      const client = new Client({ name: "signed-in", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(running.http!.url), {
          requestInit: { headers: { authorization: "Bearer alice-access-token" } },
        }),
      );
      try {
        // No traceparent: the gateway's span starts the trace, and the audit line names it.
        await client.callTool({ name: "meta__meta", arguments: {} });
      } finally {
        await client.close();
      }
    } finally {
      await running.close(0); // flushes spans, metrics and the audit file
    }
    const server = spans().find((s) => s.name === "tools/call meta__meta");
    expect(server?.attributes["enduser.id"]).toBe("alice@example.com");
    const [line] = (await readFile(join(dir, "audit.log"), "utf8")).trim().split("\n");
    expect(JSON.parse(line!)).toMatchObject({ subject: "alice@example.com", traceId: server!.traceId });
    // Metrics stay of bounded cardinality: no attribute names the caller.
    const metrics = received.filter((r) => r.path === "/v1/metrics").map((r) => JSON.stringify(r.body));
    expect(metrics.join("")).toContain("mcp.server.operation.duration");
    for (const body of metrics) {
      expect(body).not.toContain("alice");
      expect(body).not.toContain("enduser");
    }
    await rm(dir, { recursive: true, force: true });
  });
});

describe("agent runs", () => {
  it("are a span with their model requests and tool calls as children, down to the server", async () => {
    received.length = 0;
    const telemetry = startTelemetry(telemetrySettings({ enabled: true, endpoint }, {})!);
    const hub = new Hub({
      config: configOf([stdio("meta", "node_modules/.bin/tsx", META_SERVER)]),
      upstreamInterceptors: [telemetry.upstream],
    });
    const llm = await startMockLlmServer({
      turns: [{ toolCalls: [{ name: "meta__meta", arguments: {} }] }, { text: "done" }],
    });
    let seen: Record<string, string>;
    try {
      await hub.start();
      const run = runAgent({
        hub,
        llm: { baseUrl: llm.url, model: "mock-model" },
        messages: [{ role: "user", content: "trace me" }],
        tracer: telemetry.agent,
      });
      const done = await run.result;
      expect(done?.outcome).toBe("stop");
      const toolMessage = done!.messages.find((m) => m.role === "tool");
      seen = JSON.parse(String(toolMessage?.content)) as Record<string, string>;
    } finally {
      await hub.close();
      await llm.close();
      await telemetry.shutdown();
    }
    const all = spans();
    const agent = all.find((s) => s.name === "invoke_agent mcplex");
    const chats = all.filter((s) => s.name === "chat mock-model");
    const tool = all.find((s) => s.name === "execute_tool meta__meta");
    const upstream = all.find((s) => s.name === "tools/call meta");
    expect(agent?.parentSpanId).toBeUndefined();
    expect(chats).toHaveLength(2);
    for (const chat of chats)
      expect(chat).toMatchObject({ traceId: agent!.traceId, parentSpanId: agent!.spanId });
    expect(tool).toMatchObject({ traceId: agent!.traceId, parentSpanId: agent!.spanId });
    expect(upstream).toMatchObject({ traceId: agent!.traceId, parentSpanId: tool!.spanId, kind: 3 });
    expect(seen!.traceparent).toBe(`00-${agent!.traceId}-${upstream!.spanId}-01`);
  });
});

// Off by default, and then free: not one OpenTelemetry module is loaded.
describe("telemetry off", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mcplex-otel-off-"));
    await writeFile(
      join(dir, "mcplex.yaml"),
      `servers:\n  echo:\n    command: ${process.execPath}\n    args: [${resolve("bench/echo-server.mjs")}]\n`,
    );
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("loads no OpenTelemetry module unless telemetry is on", async () => {
    const off = await modulesLoaded(join(dir, "mcplex.yaml"));
    expect(off.length).toBeGreaterThan(10);
    expect(off.filter((m) => m.includes("@opentelemetry"))).toEqual([]);
    // The same process with an OTLP endpoint set does load it: the check above can fail.
    const on = await modulesLoaded(join(dir, "mcplex.yaml"), { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
    expect(on.some((m) => m.includes("@opentelemetry/sdk-trace"))).toBe(true);
  });
});
