import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { Hub } from "../../src/hub/hub.js";
import { loadInterceptorModules } from "../../src/hub/interceptor-modules.js";
import { WebSocketClientTransport } from "../../src/upstream/websocket-transport.js";
import { CLI, runCli } from "../support/cli.js";
import { COMMANDS, resultText, type ServeProcess, serveHttp } from "../support/gateway.js";
import { startMockLlm } from "../support/mock-llm.js";

// One interceptor, registered once (the config's `interceptors:`), sees a call from every kind
// of caller: each front of `mcplex serve`, `mcplex call`, the library's `hub.callTool`,
// `runAgent` (`mcplex chat`), and the inner calls of `call_tool` and `run_code`.

const TOKENS = {
  plain: "plain-token-0123456789",
  search: "search-token-0123456789",
  code: "code-token-0123456789",
};

/** Appends one line per request it sees to $AUDIT_FILE: method, target and the echo's message. */
const AUDIT = `import { appendFileSync } from "node:fs";
export default (next) => async (request) => {
  const message = request.params.arguments?.message ?? request.params.arguments?.arguments?.message;
  appendFileSync(process.env.AUDIT_FILE, JSON.stringify({
    method: request.method,
    target: request.target?.kind === "tool" ? request.target.name : undefined,
    message,
    library: request.context.library === true,
  }) + "\\n");
  return next(request);
};
`;

interface Seen {
  method: string;
  target?: string;
  message?: string;
  library: boolean;
}

let dir: string;
let config: string;
let audit: string;
let serve: ServeProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcplex-every-caller-"));
  audit = join(dir, "audit.jsonl");
  process.env.AUDIT_FILE = audit;
  writeFileSync(join(dir, "audit.mjs"), AUDIT);
  config = join(dir, "mcplex.yaml");
  const { command, args } = COMMANDS.fixture;
  writeFileSync(
    config,
    [
      "serve: { readyWait: 1m }",
      "interceptors: [./audit.mjs]",
      "servers:",
      `  fx: { command: ${JSON.stringify(command)}, args: ${JSON.stringify(args)} }`,
      "tokens:",
      `  - { token: ${TOKENS.plain} }`,
      `  - { token: ${TOKENS.search}, mode: search }`,
      `  - { token: ${TOKENS.code}, mode: code }`,
      "",
    ].join("\n"),
  );
  serve = await serveHttp(["--config", config], { env: { AUDIT_FILE: audit } });
});

afterAll(async () => {
  await serve?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function seen(): Seen[] {
  return readFileSync(audit, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Seen);
}

const echoCall = (message: string) => ({ name: "fx__echo", arguments: { message } });

async function withClient(
  transport: Parameters<Client["connect"]>[0],
  run: (client: Client) => Promise<void>,
): Promise<void> {
  const client = new Client({ name: "every-caller", version: "1.0.0" });
  await client.connect(transport);
  try {
    await run(client);
  } finally {
    await client.close();
  }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("one interceptor on the hub", () => {
  it("sees each front of mcplex serve: Streamable HTTP, WebSocket, HTTP+SSE and stdio", async () => {
    await withClient(
      new StreamableHTTPClientTransport(new URL(serve.url), {
        requestInit: { headers: bearer(TOKENS.plain) },
      }),
      async (client) => {
        expect(resultText(await client.callTool(echoCall("via http")))).toBe("echo: via http");
      },
    );
    await withClient(
      new WebSocketClientTransport({ url: serve.wsUrl, headers: bearer(TOKENS.plain) }),
      async (client) => {
        await client.callTool(echoCall("via ws"));
      },
    );
    await withClient(
      new SSEClientTransport(new URL(`${serve.origin}/sse`), {
        requestInit: { headers: bearer(TOKENS.plain) },
      }),
      async (client) => {
        await client.callTool(echoCall("via sse"));
      },
    );
    await withClient(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, "serve", "--stdio", "--config", config],
        stderr: "ignore",
        env: { ...getDefaultEnvironment(), AUDIT_FILE: audit },
      }),
      async (client) => {
        await client.callTool(echoCall("via stdio"));
      },
    );
    const messages = seen().map((s) => s.message);
    for (const front of ["http", "ws", "sse", "stdio"]) expect(messages).toContain(`via ${front}`);
    expect(seen().find((s) => s.message === "via http")).toMatchObject({
      method: "tools/call",
      target: "fx__echo",
      library: false,
    });
  });

  it("sees the inner calls of call_tool and run_code, and the meta-tool calls themselves", async () => {
    await withClient(
      new StreamableHTTPClientTransport(new URL(serve.url), {
        requestInit: { headers: bearer(TOKENS.search) },
      }),
      async (client) => {
        await client.callTool({ name: "call_tool", arguments: echoCall("via call_tool") });
      },
    );
    await withClient(
      new StreamableHTTPClientTransport(new URL(serve.url), {
        requestInit: { headers: bearer(TOKENS.code) },
      }),
      async (client) => {
        const result = await client.callTool({
          name: "run_code",
          arguments: { code: `return (await tools.fx.echo({ message: "via run_code" }))` },
        });
        expect(resultText(result)).toContain("via run_code");
      },
    );
    const all = seen();
    expect(all.filter((s) => s.message === "via call_tool").map((s) => s.target)).toEqual([
      "call_tool",
      "fx__echo",
    ]);
    expect(all.some((s) => s.target === "run_code")).toBe(true);
    expect(all.find((s) => s.message === "via run_code")).toMatchObject({ target: "fx__echo" });
  });

  // Each CLI run starts its own fixture server through tsx: seconds on a quiet machine, many
  // more on CI's two loaded cores; the timeouts below only catch a hang.
  it("sees mcplex call", { timeout: 90_000 }, async () => {
    const call = await runCli(["call", "fx__echo", '{"message":"via mcplex call"}', "--config", config], {
      env: { AUDIT_FILE: audit },
    });
    expect(call.code, call.stderr).toBe(0);
    expect(seen().find((s) => s.message === "via mcplex call")).toMatchObject({ library: true });
  });

  it("sees mcplex chat (the agent loop)", { timeout: 90_000 }, async () => {
    const llm = await startMockLlm({
      turns: [
        { toolCalls: [{ name: "fx__echo", arguments: { message: "via runAgent" } }] },
        { text: "done" },
      ],
    });
    try {
      const chat = await runCli(
        ["chat", "--config", config, "--base-url", llm.url, "--model", "mock", "-p", "echo something"],
        { env: { AUDIT_FILE: audit, MCPLEX_LLM_API_KEY: "" } },
      );
      expect(chat.code, chat.stderr).toBe(0);
    } finally {
      await llm.close();
    }
    expect(seen().find((s) => s.message === "via runAgent")).toMatchObject({ library: true });
  });

  it("sees the library's own hub.callTool", async () => {
    const loaded = await loadConfig({ config });
    const hub = new Hub({ config: loaded, ...(await loadInterceptorModules(loaded.interceptors)) });
    try {
      await hub.start();
      await hub.callTool("fx__echo", { message: "via hub.callTool" });
    } finally {
      await hub.close();
    }
    expect(seen().find((s) => s.message === "via hub.callTool")).toMatchObject({
      method: "tools/call",
      target: "fx__echo",
      library: true,
    });
  });
});

describe("interceptors: in the config", () => {
  it("names the entry and what to export when a module has no interceptor", async () => {
    writeFileSync(join(dir, "bad.mjs"), "export const nothing = 1;\n");
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, `interceptors: [./audit.mjs, ./bad.mjs]\nservers: {}\n`);
    const { code, stderr } = await runCli(["call", "fx__echo", "{}", "--config", bad]);
    expect(code).toBe(2);
    expect(stderr).toContain("interceptors[1]");
    expect(stderr).toContain("export default (next) =>");
  });
});
