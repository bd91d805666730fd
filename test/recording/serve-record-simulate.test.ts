import { readFileSync } from "node:fs";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolSimulator } from "../../src/recording/tool-simulator.js";
import { runCli } from "../support/cli.js";
import { COMMANDS, type ServeProcess, serveHttp, yamlConfig } from "../support/gateway.js";
import { startMockLlm } from "../support/mock-llm.js";

let dir: string;
let config: string;
let recordings: string;
let env: Record<string, string>;

/** Connects an SDK client to a running serve, runs `use`, and disconnects. */
async function withClient<T>(serve: ServeProcess, use: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: "replay-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(serve.url)));
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

/** What the live servers answered while they were recorded. */
let liveEcho: unknown;
let liveGraph: unknown;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-serve-record-"));
  config = join(dir, "mcplex.yaml");
  recordings = join(dir, "recordings");
  env = { MCPLEX_CACHE_DIR: join(dir, "cache") };
  await writeFile(
    config,
    yamlConfig({
      everything: COMMANDS.everything,
      memory: { ...COMMANDS.memory, env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } },
    }),
  );
  const serve = await serveHttp(["--config", config, "--record", recordings], { env });
  try {
    await withClient(serve, async (client) => {
      liveEcho = await client.callTool({ name: "everything__echo", arguments: { message: "recorded" } });
      liveGraph = await client.callTool({ name: "memory__read_graph", arguments: {} });
    });
  } finally {
    await serve.stop();
  }
}, 90_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("mcplex serve --record DIR", () => {
  it("writes one recording per server and caches each server's tool list", async () => {
    expect((await readdir(recordings)).sort()).toEqual(["everything.jsonl", "memory.jsonl"]);
    expect((await readdir(join(dir, "cache", "tools"))).sort()).toEqual(["everything.json", "memory.json"]);
    const lines = readFileSync(join(recordings, "everything.jsonl"), "utf8").trim().split("\n");
    expect(lines.map((l) => JSON.parse(l).type)).toEqual(
      expect.arrayContaining(["header", "server", "lists", "request", "result"]),
    );
  });
});

describe("mcplex serve --simulate", () => {
  it("serves the recordings, saying so in the banner, /readyz, the dashboard state and each result's _meta", async () => {
    const serve = await serveHttp(["--config", config, "--record", recordings, "--simulate"], { env });
    try {
      expect(serve.stderr()).toContain("mcplex gateway (SIMULATED): 2 of 2 servers ready");
      expect(serve.stderr()).toContain("mcplex: everything is SIMULATED from its recording");
      const echo = await withClient(serve, (client) =>
        client.callTool({ name: "everything__echo", arguments: { message: "recorded" } }),
      );
      expect(echo._meta?.["mcplex/simulated"]).toBe(true);
      const { _meta: _, ...answer } = echo;
      expect(answer).toEqual(liveEcho);
      const readyz = (await (await fetch(`${serve.origin}/readyz`)).json()) as {
        servers: Array<{ name: string; simulated?: string }>;
      };
      expect(readyz.servers.map((s) => [s.name, s.simulated])).toEqual([
        ["everything", "recording"],
        ["memory", "recording"],
      ]);
      const state = (await (await fetch(`${serve.origin}/dashboard/state`)).json()) as {
        servers: Array<{ name: string; simulated?: string }>;
      };
      expect(state.servers.map((s) => s.simulated)).toEqual(["recording", "recording"]);
    } finally {
      await serve.stop();
    }
  }, 60_000);

  it("stands in with the cached tool list where there is no recording, the same for the same seed", async () => {
    const answers: unknown[] = [];
    for (const seed of ["4", "4"]) {
      const serve = await serveHttp(["--config", config, "--simulate", "--seed", seed, "--speed", "0"], {
        env,
      });
      try {
        expect(serve.stderr()).toContain("memory is SIMULATED from its cached tool list");
        answers.push(
          await withClient(serve, (client) => client.callTool({ name: "memory__read_graph", arguments: {} })),
        );
      } finally {
        await serve.stop();
      }
    }
    expect(answers[0]).toEqual(answers[1]);
    expect((answers[0] as { _meta?: Record<string, unknown> })._meta?.["mcplex/simulated"]).toBe(true);
    expect((answers[0] as { structuredContent?: unknown }).structuredContent).toBeDefined();
  }, 60_000);

  it("says at start which server has nothing to stand in with", async () => {
    const serve = await serveHttp(["--config", config, "--simulate"], {
      env: { MCPLEX_CACHE_DIR: join(dir, "empty-cache") },
    });
    try {
      expect(serve.stderr()).toContain(
        "mcplex: memory cannot be simulated: no recording and no cached tool list",
      );
      expect(serve.stderr()).toContain("0 of 2 servers ready");
    } finally {
      await serve.stop();
    }
  }, 60_000);
});

describe("record: in the config", () => {
  it("records `mcplex call` too, with the config's secret and the sensitive field kept off the disk", async () => {
    const secret = "ghp_0123456789abcdefSECRET";
    const recorded = join(dir, "call-recordings");
    const file = join(dir, "record.yaml");
    await writeFile(
      file,
      [
        "servers:",
        "  everything:",
        `    command: ${JSON.stringify(COMMANDS.everything.command)}`,
        "    args: [stdio]",
        "    env:",
        "      GITHUB_TOKEN: ${GITHUB_TOKEN}",
        "    record:",
        `      dir: ${JSON.stringify(recorded)}`,
        "      redact: [password]",
        "",
      ].join("\n"),
    );
    const { code, stdout, stderr } = await runCli(
      [
        "call",
        "everything__echo",
        JSON.stringify({ message: `my token is ${secret}`, password: "opensesame-42" }),
        "--config",
        file,
      ],
      { env: { ...env, GITHUB_TOKEN: secret } },
    );
    expect(code, stderr).toBe(0);
    expect(stdout).toContain("Echo: my token is");
    const bytes = readFileSync(join(recorded, "everything.jsonl"));
    expect(bytes.includes(secret)).toBe(false);
    expect(bytes.includes("opensesame-42")).toBe(false);
    expect(bytes.toString()).toContain('"password":"[redacted]"');
    expect(bytes.toString()).toContain('"text":"Echo: my token is ***"');
  }, 60_000);
});

describe("mcplex replay verify", () => {
  it("exits 0 against the live server the recording was made from", async () => {
    const { code, stdout, stderr } = await runCli(
      ["replay", "verify", join(recordings, "memory.jsonl"), "--server", "memory", "--config", config],
      { env },
    );
    expect(code, stderr).toBe(0);
    expect(stdout).toContain("memory: all 1 recorded answers are unchanged");
  }, 60_000);

  it("exits 1 and names the changed answer once the server's data changed", async () => {
    const created = await runCli(
      [
        "call",
        "memory__create_entities",
        JSON.stringify({ entities: [{ name: "Grace", entityType: "person", observations: ["COBOL"] }] }),
        "--config",
        config,
      ],
      { env },
    );
    expect(created.code, created.stderr).toBe(0);
    const { code, stdout } = await runCli(
      [
        "replay",
        "verify",
        join(recordings, "memory.jsonl"),
        "--server",
        "memory",
        "--config",
        config,
        "--json",
      ],
      { env },
    );
    expect(code).toBe(1);
    const report = JSON.parse(stdout) as {
      checked: number;
      drifts: Array<{ method: string; params: unknown; differences: Array<{ path: string }> }>;
    };
    expect(report.checked).toBe(1);
    expect(report.drifts).toHaveLength(1);
    expect(report.drifts[0]).toMatchObject({ method: "tools/call", params: { name: "read_graph" } });
    expect(report.drifts[0]!.differences.map((d) => d.path)).toContain(
      "/result/structuredContent/entities/0",
    );
    expect(JSON.stringify(liveGraph)).not.toContain("Grace");
  }, 60_000);

  it("refuses an unknown server, naming the configured ones", async () => {
    const { code, stderr } = await runCli(
      ["replay", "verify", join(recordings, "memory.jsonl"), "--server", "memroy", "--config", config],
      { env },
    );
    expect(code).toBe(2);
    expect(stderr).toContain('no server "memroy"');
    expect(stderr).toContain("memory");
  });
});

describe("mcplex chat against a simulated server", () => {
  it("runs the agent loop end to end on the simulator's answers", async () => {
    const simulated = join(dir, "simulated.yaml");
    await writeFile(
      simulated,
      `servers:\n  memory:\n    command: ${JSON.stringify(COMMANDS.memory.command)}\n    simulate: true\n`,
    );
    const cached = JSON.parse(readFileSync(join(dir, "cache", "tools", "memory.json"), "utf8")) as {
      tools: Record<string, unknown>[];
    };
    const lookup = new ToolSimulator({ server: "memory", tools: cached.tools, seed: 1 }).lookup(
      "tools/call",
      {
        name: "read_graph",
        arguments: {},
      },
    );
    const expected = lookup.found
      ? (lookup.exchange.answer as { result: { content: Array<{ text: string }> } }).result
      : undefined;
    const llm = await startMockLlm({
      turns: [
        { toolCalls: [{ name: "memory__read_graph", arguments: {} }] },
        (request) => {
          const tool = request.body.messages.find((m) => m.role === "tool");
          return { text: `The graph: ${String(tool?.content)}` };
        },
      ],
    });
    try {
      const { code, stdout, stderr } = await runCli(
        ["chat", "--config", simulated, "--base-url", llm.url, "--model", "mock", "-p", "What is in memory?"],
        { env: { ...env, MCPLEX_LLM_API_KEY: "" } },
      );
      expect(code, stderr).toBe(0);
      expect(stderr).toContain("[tool] memory__read_graph");
      expect(stdout.trim()).toBe(`The graph: ${expected!.content[0]!.text}`);
    } finally {
      await llm.close();
    }
  }, 60_000);
});
