import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Client,
  Client as SdkClient,
  SSEClientTransport,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningGateway, serve } from "../../src/assembly/serve.js";
import type { AuditConfig, McplexConfig } from "../../src/config/types.js";
import type { AuditRecord } from "../../src/interceptors/audit-log.js";
import { WebSocketClientTransport } from "../../src/upstream/websocket-transport.js";
import { configOf, fixture } from "../support/config.js";
import { connectHttp, postRev2026, rev2026Request } from "../support/gateway.js";
import { until } from "../support/wait.js";

// The audit trail of `mcplex serve`, on a real socket with SDK v2 clients and the fixture server:
// one JSON line per call, read and prompt, from every front and from code mode's inner calls,
// with who made it and how it ended, refusals included; content only when asked, redacted.

const TOKENS = {
  reader: "reader-token-0123456789",
  coder: "coder-token-0123456789",
  outsider: "outsider-token-0123456789",
};
/** A secret of the config (an upstream's API key, say): never in an audit line. */
const SECRET = "sk-live-5f0c1e2d3a4b";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-audit-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** `mcplex serve --http` in process, on port 0, auditing as `audit` says. */
function serveAudited(audit: Partial<AuditConfig> & { to: string }, extra: Partial<McplexConfig> = {}) {
  return serve({
    config: configOf([fixture("fx")], {
      tokens: [
        { token: TOKENS.reader },
        { token: TOKENS.coder, mode: "code" },
        { token: TOKENS.outsider, profile: "outside" },
      ],
      profiles: { outside: { servers: ["elsewhere"], tools: {} } },
      audit: { maxSize: 10 << 20, keep: 5, content: false, ...audit },
      serve: { readyWait: 60_000 },
      ...extra,
    }),
    transport: "http",
    http: { host: "127.0.0.1", port: 0, dashboard: false },
    watch: false,
  });
}

/** The audit lines written so far, each parsed (a line that is not JSON fails the test). */
async function records(file: string): Promise<AuditRecord[]> {
  const text = await readFile(file, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as AuditRecord);
}

/** Waits until the file holds `count` lines that match, and returns them. */
async function written(
  file: string,
  count: number,
  match: (r: AuditRecord) => boolean,
): Promise<AuditRecord[]> {
  let found: AuditRecord[] = [];
  await until(
    async () => {
      found = (await records(file)).filter(match);
      return found.length >= count;
    },
    15_000,
    `${count} matching audit lines in ${file}`,
  );
  return found;
}

describe("the audit trail", () => {
  let running: RunningGateway;
  let file: string;
  beforeAll(async () => {
    file = join(dir, "audit.log");
    running = await serveAudited({ to: file }, { secrets: [SECRET] });
    await running.started;
  }, 60_000);
  afterAll(() => running?.close(0));

  it("writes one line per tool call, resource read, prompt get and completion, with who, what and how it ended", async () => {
    const client = await connectHttp(running.http!.url, { token: TOKENS.reader, name: "audit-reader" });
    try {
      await client.listTools();
      await client.callTool({ name: "fx__echo", arguments: { message: `hi ${SECRET}` } });
      await client.readResource({ uri: "fixture://readme" });
      await client.getPrompt({ name: "fx__greet", arguments: { who: "Ada" } });
      // The fixture has no completions: the server's own error is the outcome.
      await expect(
        client.complete({
          ref: { type: "ref/prompt", name: "fx__greet" },
          argument: { name: "who", value: "A" },
        }),
      ).rejects.toThrow(/Method not found/);
    } finally {
      await client.close();
    }
    const lines = await written(file, 4, (r) => r.client === "audit-reader");
    const [call, read, prompt, completion] = lines;
    expect(call).toEqual({
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      subject: "token#0",
      via: "token",
      client: "audit-reader",
      front: "http",
      method: "tools/call",
      target: "fx__echo",
      server: "fx",
      outcome: "ok",
      durationMs: expect.any(Number),
      requestId: expect.any(Number),
      sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(read).toMatchObject({
      method: "resources/read",
      target: "fixture://readme",
      server: "fx",
      outcome: "ok",
    });
    expect(prompt).toMatchObject({ method: "prompts/get", target: "fx__greet", server: "fx", outcome: "ok" });
    expect(completion).toMatchObject({
      method: "completion/complete",
      target: "fx__greet",
      server: "fx",
      outcome: "MethodNotFound",
      code: -32601,
    });
    // Lists are not audited; no content without `content: true`; no token, no secret.
    expect(lines.map((r) => r.method)).toEqual([
      "tools/call",
      "resources/read",
      "prompts/get",
      "completion/complete",
    ]);
    expect(call).not.toHaveProperty("arguments");
    const text = await readFile(file, "utf8");
    expect(text).not.toContain(TOKENS.reader);
    expect(text).not.toContain(SECRET);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it("records a tool's error as error, and requests refused before a server as the error's code", async () => {
    const client = await connectHttp(running.http!.url, { token: TOKENS.reader, name: "audit-errors" });
    const outsider = await connectHttp(running.http!.url, { token: TOKENS.outsider, name: "audit-outsider" });
    try {
      expect((await client.callTool({ name: "fx__fail", arguments: {} })).isError).toBe(true);
      await expect(client.callTool({ name: "fx__no_such_tool", arguments: {} })).rejects.toThrow(
        /Unknown tool/,
      );
      // Its profile has no fx: the tool is not found for it, and never reaches the server.
      await expect(outsider.callTool({ name: "fx__echo", arguments: { message: "x" } })).rejects.toThrow(
        /Unknown tool/,
      );
    } finally {
      await client.close();
      await outsider.close();
    }
    const [failed, unknown] = await written(file, 2, (r) => r.client === "audit-errors");
    expect(failed).toMatchObject({ target: "fx__fail", server: "fx", outcome: "error" });
    expect(failed).not.toHaveProperty("code");
    expect(unknown).toMatchObject({ target: "fx__no_such_tool", outcome: "InvalidParams", code: -32602 });
    expect(unknown).not.toHaveProperty("server");
    const [refused] = await written(file, 1, (r) => r.client === "audit-outsider");
    expect(refused).toMatchObject({
      subject: "token#2",
      target: "fx__echo",
      outcome: "InvalidParams",
      code: -32602,
    });
    expect(refused).not.toHaveProperty("server");
  });

  it("audits every front, and code mode's inner calls as calls of their own", async () => {
    const { url } = running.http!;
    const origin = url.replace(/\/mcp$/, "");
    const headers = { authorization: `Bearer ${TOKENS.reader}` };
    const echo = async (client: Client, message: string) => {
      try {
        await client.callTool({ name: "fx__echo", arguments: { message } });
      } finally {
        await client.close();
      }
    };
    const sse = new SdkClient({ name: "audit-sse", version: "1" });
    await sse.connect(new SSEClientTransport(new URL(`${origin}/sse`), { requestInit: { headers } }));
    await echo(sse, "over sse");
    const ws = new SdkClient({ name: "audit-ws", version: "1" });
    await ws.connect(new WebSocketClientTransport({ url: running.http!.wsUrl, headers }));
    await echo(ws, "over ws");
    const stateless = new SdkClient(
      { name: "audit-2026", version: "1" },
      { versionNegotiation: { mode: "auto" } },
    );
    await stateless.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    await echo(stateless, "over 2026");
    // A 2026 request with the client's trace context: the line names its trace.
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const posted = await postRev2026(
      url,
      rev2026Request("traced-1", "tools/call", { name: "fx__echo", arguments: { message: "traced" } }),
      { ...headers, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    );
    expect(posted.status).toBe(200);
    const coder = await connectHttp(url, { token: TOKENS.coder, name: "audit-coder" });
    try {
      const ran = await coder.callTool({
        name: "run_code",
        arguments: { code: 'return await tools.fx.echo({ message: "from a script" })' },
      });
      expect(ran.isError).toBeFalsy();
    } finally {
      await coder.close();
    }

    const fronts = Object.fromEntries(
      (await written(file, 3, (r) => ["audit-sse", "audit-ws", "audit-2026"].includes(r.client ?? ""))).map(
        (r) => [r.client, r],
      ),
    );
    expect(fronts["audit-sse"]).toMatchObject({
      front: "sse",
      subject: "token#0",
      sessionId: expect.any(String),
    });
    expect(fronts["audit-ws"]).toMatchObject({ front: "ws", subject: "token#0", outcome: "ok" });
    // 2026: stateless, no session; the client named itself in the envelope.
    expect(fronts["audit-2026"]).toMatchObject({ front: "http", outcome: "ok" });
    expect(fronts["audit-2026"]).not.toHaveProperty("sessionId");
    const [traced] = await written(file, 1, (r) => r.requestId === "traced-1");
    expect(traced).toMatchObject({ front: "http", client: "gateway-test", traceId, outcome: "ok" });

    // The inner call ends first, and is written first.
    const [inner, outer] = await written(file, 2, (r) => r.client === "audit-coder");
    expect(inner).toMatchObject({ subject: "token#1", target: "fx__echo", server: "fx", outcome: "ok" });
    expect(outer).toMatchObject({ subject: "token#1", target: "run_code", outcome: "ok" });
    expect(outer).not.toHaveProperty("server");
    expect(inner!.requestId).toBe(`${outer!.requestId}/1`);
  });
});

describe("the audit trail with content: true", () => {
  it("adds the arguments and the result or error, with the config's secrets redacted", async () => {
    const file = join(dir, "content.log");
    const running = await serveAudited({ to: file, content: true }, { secrets: [SECRET] });
    try {
      await running.started;
      const client = await connectHttp(running.http!.url, { token: TOKENS.reader, name: "audit-content" });
      try {
        await client.callTool({ name: "fx__echo", arguments: { message: `key=${SECRET}` } });
        await expect(client.callTool({ name: `fx__${SECRET}`, arguments: {} })).rejects.toThrow(
          /Unknown tool/,
        );
        await client.getPrompt({ name: "fx__greet", arguments: { who: "Ada" } });
      } finally {
        await client.close();
      }
    } finally {
      await running.close(0); // flushes the file
    }
    const [call, refused, prompt] = (await records(file)).filter((r) => r.client === "audit-content");
    expect(call).toMatchObject({
      outcome: "ok",
      arguments: { message: "key=***" },
      result: { content: [{ type: "text", text: "echo: key=***" }] },
    });
    expect(refused).toMatchObject({
      target: "fx__***",
      outcome: "InvalidParams",
      error: { code: -32602, message: "Unknown tool: fx__***" },
    });
    expect(prompt).toMatchObject({
      arguments: { who: "Ada" },
      result: { messages: [{ role: "user", content: { type: "text", text: "Say hello to Ada" } }] },
    });
    expect(await readFile(file, "utf8")).not.toContain(SECRET);
  }, 60_000);
});
