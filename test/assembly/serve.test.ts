import { PassThrough } from "node:stream";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { type RunningGateway, serve } from "../../src/assembly/serve.js";
import type { Interceptor } from "../../src/hub/call-pipeline.js";
import { configOf, fixture } from "../support/config.js";
import { resultText } from "../support/gateway.js";

// `serve()` is what `mcplex serve` runs, for a program that embeds the gateway.

let running: RunningGateway | undefined;
afterEach(async () => {
  await running?.close(0);
  running = undefined;
});

describe("serve()", () => {
  it("serves a config over HTTP with the embedder's interceptors, and leaves the config as it was", async () => {
    const config = configOf([fixture("fx")], { tokens: [{ token: "a-token-of-sixteen+" }] });
    const before = structuredClone({ ...config, servers: config.servers.map((s) => ({ ...s })) });
    const names: string[] = [];
    const audit: Interceptor = (next) => async (request) => {
      if (request.target?.kind === "tool") names.push(request.target.name);
      return next(request);
    };
    running = await serve({
      config,
      transport: "http",
      http: { port: 0, dashboard: false },
      tokens: [{ token: "another-token-of-16" }],
      noPrefix: true,
      interceptors: [audit],
      watch: false,
    });
    await running.started;
    const client = new Client({ name: "embedder", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(running.http!.url), {
        requestInit: { headers: { authorization: "Bearer another-token-of-16" } },
      }),
    );
    try {
      expect(resultText(await client.callTool({ name: "echo", arguments: { message: "hi" } }))).toBe(
        "echo: hi",
      );
      expect(names).toEqual(["echo"]);
    } finally {
      await client.close();
    }
    // The copy it serves has no prefixes and both tokens among the secrets; the caller's has neither.
    expect(config).toEqual(before);
    expect(running.hub.redact("another-token-of-16 a-token-of-sixteen+")).toBe("*** ***");
  });

  it("serves one client over stdio streams and stops when its input ends", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    running = await serve({
      config: configOf([fixture("fx")]),
      transport: "stdio",
      stdio: { input, output },
      watch: false,
    });
    expect(running.http).toBeUndefined();
    const lines: unknown[] = [];
    let buffer = "";
    const answered = new Promise<void>((resolve) =>
      output.on("data", (chunk: Buffer) => {
        buffer += chunk.toString("utf8");
        for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
          const line = JSON.parse(buffer.slice(0, nl)) as { id?: unknown };
          buffer = buffer.slice(nl + 1);
          // Answers only: list changes come as the server starts.
          if (line.id !== undefined) lines.push(line);
          if (lines.length === 2) resolve();
        }
      }),
    );
    const send = (m: unknown) => input.write(`${JSON.stringify(m)}\n`);
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "fx__echo", arguments: { message: "x" } },
    });
    await answered;
    expect(lines[1], JSON.stringify(lines[1])).toMatchObject({
      id: 2,
      result: { content: [{ text: "echo: x" }] },
    });
    input.end();
    await running.stdio!.done;
  });

  it("fails with the front's error, and stops what it started, when the port is taken", async () => {
    running = await serve({
      config: configOf([fixture("fx")]),
      transport: "http",
      http: { port: 0 },
      watch: false,
    });
    const port = Number(new URL(running.http!.url).port);
    await expect(
      serve({ config: configOf([fixture("fx")]), transport: "http", http: { port }, watch: false }),
    ).rejects.toThrow(/cannot listen/);
  });
});
