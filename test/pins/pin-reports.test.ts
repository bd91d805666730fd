import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { type ServeEvent, serve } from "../../src/assembly/serve.js";
import { loadConfig } from "../../src/config/load-config.js";
import { runCli } from "../support/cli.js";
import { nextEvent } from "../support/wait.js";

// What serving reports of a held change: serve's event (the log), the metric, and a span event
// sent over OTLP/HTTP to a receiver here.

const SERVER = resolve("test/fixtures/servers/shifting-tools-server.mjs");
let receiver: Server;
let endpoint: string;
const traces: unknown[] = [];
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-pin-reports-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});
beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/v1/traces") traces.push(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => receiver.close(() => r()));
});

async function serveOnce(onEvent: (event: ServeEvent) => void, watch = false) {
  const config = await loadConfig({ config: join(dir, "mcplex.yaml") });
  const running = await serve({
    config,
    transport: "http",
    http: { port: 0, dashboard: false },
    watch,
    onEvent,
  });
  await running.started;
  return running;
}

/** Pins the fixture server's first list (serving once), then changes echo's annotations. */
async function pinThenChange(): Promise<void> {
  const toolsFile = join(dir, "tools.json");
  const echo = { name: "echo", description: "Echoes.", inputSchema: { type: "object" } };
  await writeFile(toolsFile, JSON.stringify([echo]));
  await writeFile(
    join(dir, "mcplex.yaml"),
    `pin: hold-tools\ntelemetry: { enabled: true, endpoint: "${endpoint}" }\n` +
      `servers:\n  shifty:\n    command: ${JSON.stringify(process.execPath)}\n` +
      `    args: [${JSON.stringify(SERVER)}, ${JSON.stringify(toolsFile)}]\n`,
  );
  const first: ServeEvent[] = [];
  await (await serveOnce((e) => first.push(e))).close(0);
  expect(first.filter((e) => e.type === "pin-changes")).toEqual([]);

  await writeFile(toolsFile, JSON.stringify([{ ...echo, annotations: { destructiveHint: true } }]));
}

it("serve reports a held change in its events, mcplex_pin_changes and a span event", {
  timeout: 60_000,
}, async () => {
  await pinThenChange();
  const events: ServeEvent[] = [];
  const running = await serveOnce((e) => events.push(e));
  try {
    const metrics = await (await fetch(running.http!.url.replace(/\/mcp$/, "/metrics"))).text();
    expect(metrics).toContain('mcplex_pin_changes{server="shifty",held="true"} 1');
    expect(metrics).toContain('mcplex_pin_changes{server="shifty",held="false"} 0');
    expect(events.find((e) => e.type === "pin-changes")).toMatchObject({
      server: "shifty",
      changes: [{ tool: "echo", kind: "changed", held: true, fields: [{ field: "annotations" }] }],
    });
  } finally {
    await running.close(0); // flushes spans
  }
  const spans = traces.flatMap((body) =>
    (
      body as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<Record<string, any>> }> }> }
    ).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)),
  );
  const span = spans.find((s) => s.name === "mcplex pin-changes");
  expect(span, JSON.stringify(spans.map((s) => s.name))).toBeDefined();
  const event = span!.events[0] as {
    name: string;
    attributes: Array<{ key: string; value: Record<string, unknown> }>;
  };
  expect(event.name).toBe("mcplex.pin.change");
  const attributes = Object.fromEntries(event.attributes.map((a) => [a.key, Object.values(a.value)[0]]));
  expect(attributes).toMatchObject({
    "gen_ai.tool.name": "echo",
    "mcplex.pin.kind": "changed",
    "mcplex.pin.held": true,
    "mcplex.pin.fields": "annotations",
  });
});

it("a running serve lets a change in as soon as mcplex trust approves it", { timeout: 60_000 }, async () => {
  await pinThenChange();
  const running = await serveOnce(() => {}, true);
  try {
    expect(running.hub.pinChanges("shifty")).toMatchObject([{ tool: "echo", held: true }]);
    const released = nextEvent(
      running.hub,
      (e) => e.type === "pin-changes" && e.server === "shifty" && e.changes.length === 0,
    );
    const trust = await runCli(["trust", "shifty", "--config", join(dir, "mcplex.yaml")]);
    expect(trust.code, trust.stderr).toBe(0);
    await released;
    expect(running.hub.tools().map((t) => t.name)).toEqual(["shifty__echo"]);
  } finally {
    await running.close(0);
  }
});
