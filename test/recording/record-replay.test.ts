import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerConfig } from "../../src/config/types.js";
import { AbortedError, RpcError } from "../../src/errors.js";
import { Hub } from "../../src/hub/hub.js";
import { TrafficRecorder } from "../../src/interceptors/traffic-recorder.js";
import { configOf, EVERYTHING, MEMORY, stdio } from "../support/config.js";

const dir = mkdtempSync(join(tmpdir(), "mcplex-record-"));
const recordings = join(dir, "recordings");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A secret of the config: it must never reach a recording. */
const SECRET = "sk-live-9f8e7d6c5b4a";
/** The value of a configured sensitive field (`record.redact: [password]`). */
const PASSWORD = "hunter2-correct-horse";

/** What a call came to: its result or its JSON-RPC error, `_meta` left out (the replay marks its results). */
async function outcome(call: Promise<unknown>): Promise<unknown> {
  try {
    const { _meta: _, ...result } = (await call) as Record<string, unknown>;
    return { result };
  } catch (error) {
    if (error instanceof RpcError) return { error: { code: error.code, message: error.message } };
    throw error;
  }
}

/** The calls recorded live and replayed, each as a function of a hub. */
const CALLS: Record<string, (hub: Hub) => Promise<unknown>> = {
  echo: (hub) => hub.callTool("everything__echo", { message: "hello replay" }),
  sum: (hub) => hub.callTool("everything__get-sum", { a: 2, b: 40 }),
  "structured content": (hub) => hub.callTool("everything__get-structured-content", { location: "Chicago" }),
  "a call the server refuses": (hub) => hub.callTool("everything__get-sum", { a: "two" }),
  "a secret in the arguments": (hub) => hub.callTool("everything__echo", { message: `token ${SECRET}` }),
  "a sensitive field": (hub) => hub.callTool("everything__echo", { message: "login", password: PASSWORD }),
  "resources/read": (hub) => hub.readResource("demo://resource/static/document/architecture.md"),
  "prompts/get": (hub) => hub.getPrompt("everything__args-prompt", { city: "Lisbon" }),
};

const live = new Map<string, unknown>();
let liveTools: string[] = [];
const liveGraphs: unknown[] = [];
let liveProgress = 0;

function recordedServers(): ServerConfig[] {
  const record = { dir: recordings, redact: ["password"] };
  return [
    stdio("everything", EVERYTHING, ["stdio"], { record }),
    stdio("memory", MEMORY, [], {
      env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") },
      record,
    } as Partial<ServerConfig>),
  ];
}

function replayServers(mode: "sequential" | "match"): ServerConfig[] {
  const common = {
    enabled: true,
    timeout: 10_000,
    startTimeout: 20_000,
    lazy: false,
    tools: {},
    mode,
    speed: 0,
  };
  return ["everything", "memory"].map(
    (name) =>
      ({
        ...common,
        name,
        transport: "replay",
        recording: [join(recordings, `${name}.jsonl`)],
      }) as ServerConfig,
  );
}

beforeAll(async () => {
  const config = configOf(recordedServers(), { secrets: [SECRET] });
  const recorder = new TrafficRecorder({
    recordOf: (name) => config.servers.find((s) => s.name === name)?.record,
    secrets: config.secrets,
  });
  const hub = new Hub({ config, upstreamInterceptors: [recorder.interceptor] });
  recorder.attach(hub);
  try {
    await hub.start();
    liveTools = hub.tools().map((t) => t.name);
    for (const [name, call] of Object.entries(CALLS)) live.set(name, await outcome(call(hub)));
    await hub.callTool(
      "everything__trigger-long-running-operation",
      { duration: 0.2, steps: 3 },
      { onProgress: () => liveProgress++ },
    );
    // The memory server's answers depend on what came before: read, write, read again.
    liveGraphs.push(await outcome(hub.callTool("memory__read_graph", {})));
    await hub.callTool("memory__create_entities", {
      entities: [{ name: "Ada", entityType: "person", observations: ["wrote the first program"] }],
    });
    liveGraphs.push(await outcome(hub.callTool("memory__read_graph", {})));
  } finally {
    await hub.close();
    recorder.close();
  }
}, 60_000);

describe("a recording made through the hub", () => {
  it("holds neither the config's secret nor the sensitive field's value, in any file", () => {
    const bytes = readdirSync(recordings).map((file) => readFileSync(join(recordings, file)));
    expect(bytes.length).toBeGreaterThanOrEqual(2);
    for (const content of bytes) {
      expect(content.includes(SECRET)).toBe(false);
      expect(content.includes(PASSWORD)).toBe(false);
    }
    const everything = readFileSync(join(recordings, "everything.jsonl"), "utf8");
    expect(everything).toContain('"password":"[redacted]"');
    expect(everything).toContain("token ***");
  });

  it("starts with a version header, then the handshake and the lists", () => {
    const lines = readFileSync(join(recordings, "memory.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({
      type: "header",
      format: "mcplex-recording",
      version: 1,
      server: "memory",
    });
    const types = lines.map((l) => l.type);
    expect(types.indexOf("server")).toBeGreaterThan(0);
    expect(types).toContain("lists");
    const server = lines.find((l) => l.type === "server");
    expect(server.protocolVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(server.serverInfo.name).toBeTruthy();
    const request = lines.find((l) => l.type === "request");
    const answer = lines.find((l) => l.type === "result" && l.id === request.id);
    expect(typeof answer.ms).toBe("number");
  });

  it("keeps the progress the server sent during a call", () => {
    const lines = readFileSync(join(recordings, "everything.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(liveProgress).toBeGreaterThan(0);
    expect(lines.filter((l) => l.type === "progress")).toHaveLength(liveProgress);
  });
});

describe("replaying the recording as servers (transport: replay)", () => {
  let hub: Hub;
  beforeAll(async () => {
    hub = new Hub({ config: configOf(replayServers("sequential"), { secrets: [SECRET] }) });
    await hub.start();
  }, 30_000);
  afterAll(() => hub.close());

  it("lists the tools the servers listed", () => {
    expect(hub.servers().map((s) => [s.name, s.state, s.simulated])).toEqual([
      ["everything", "ready", "recording"],
      ["memory", "ready", "recording"],
    ]);
    expect(hub.tools().map((t) => t.name)).toEqual(liveTools);
  });

  it.each(Object.keys(CALLS))("answers %s as the server did, marked simulated in _meta", async (name) => {
    // The secret was recorded as *** inside the text, so its replay is asked with that text; a
    // sensitive field recorded as "[redacted]" matches whatever value is sent in its place.
    const call =
      name === "a secret in the arguments"
        ? hub.callTool("everything__echo", { message: "token ***" })
        : CALLS[name]!(hub);
    const raw = await call.catch((e: unknown) => e);
    if (!(raw instanceof Error))
      expect((raw as { _meta?: Record<string, unknown> })._meta?.["mcplex/simulated"]).toBe(true);
    const replayed = await outcome(raw instanceof Error ? Promise.reject(raw) : Promise.resolve(raw));
    const expected = live.get(name);
    if (name === "a secret in the arguments")
      expect(replayed).toEqual(JSON.parse(JSON.stringify(expected).replaceAll(SECRET, "***")));
    else expect(replayed).toEqual(expected);
  });

  it("replays progress to a call that asks for it", async () => {
    let progress = 0;
    await hub.callTool(
      "everything__trigger-long-running-operation",
      { duration: 0.2, steps: 3 },
      { onProgress: () => progress++ },
    );
    expect(progress).toBe(liveProgress);
  });

  it("answers the same request in recorded order in sequential mode, then says they are used up", async () => {
    expect(await outcome(hub.callTool("memory__read_graph", {}))).toEqual(liveGraphs[0]);
    expect(await outcome(hub.callTool("memory__read_graph", {}))).toEqual(liveGraphs[1]);
    expect(liveGraphs[0]).not.toEqual(liveGraphs[1]);
    const used = await hub.callTool("memory__read_graph", {}).catch((e: unknown) => e);
    expect(used).toBeInstanceOf(RpcError);
    expect((used as Error).message).toContain("all 2 recorded answer(s) to this request were used");
  });

  it("refuses a request it has no answer to, naming the closest recorded one", async () => {
    const error = await hub.callTool("everything__echo", { message: "never said" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).message).toContain("no recorded answer to tools/call");
    expect((error as RpcError).message).toContain(
      'the closest recorded request is tools/call {"name":"echo","arguments":{"message":"hello replay"}}',
    );
    expect((error as RpcError).data).toEqual({
      closest: { method: "tools/call", params: { name: "echo", arguments: { message: "hello replay" } } },
    });
  });
});

describe("replaying in match mode", () => {
  it("answers a request with its first recorded answer, as often and in any order", async () => {
    const hub = new Hub({ config: configOf(replayServers("match")) });
    try {
      await hub.start();
      const graphs = [
        await outcome(hub.callTool("memory__read_graph", {})),
        await outcome(hub.callTool("memory__read_graph", {})),
        await outcome(hub.callTool("memory__read_graph", {})),
      ];
      expect(graphs).toEqual([liveGraphs[0], liveGraphs[0], liveGraphs[0]]);
      expect(await outcome(CALLS.sum!(hub))).toEqual(live.get("sum"));
    } finally {
      await hub.close();
    }
  });
});

describe("replaying at the recorded pace", () => {
  it("stops a call when its caller aborts, without waiting for the recorded answer", async () => {
    const servers = replayServers("sequential").map((server) => ({ ...server, speed: 1 }) as ServerConfig);
    const hub = new Hub({ config: configOf(servers) });
    try {
      await hub.start();
      const controller = new AbortController();
      let progress = 0;
      const call = hub.callTool(
        "everything__trigger-long-running-operation",
        { duration: 0.2, steps: 3 },
        {
          signal: controller.signal,
          onProgress: () => {
            progress++;
            controller.abort();
          },
        },
      );
      await expect(call).rejects.toBeInstanceOf(AbortedError);
      // The recording had more progress and then an answer: the abort came first.
      expect(progress).toBe(1);
      expect(liveProgress).toBeGreaterThan(1);
    } finally {
      await hub.close();
    }
  });
});

describe("a recording that cannot be written", () => {
  it("stops recording that server, says why, and the calls go on", async () => {
    const blocker = join(dir, "not-a-directory");
    writeFileSync(blocker, "");
    const record = { dir: join(blocker, "recordings"), redact: [] };
    const failures: Array<[string, string]> = [];
    const recorder = new TrafficRecorder({
      recordOf: () => record,
      secrets: [],
      onError: (server, error) => failures.push([server, error.message]),
    });
    const hub = new Hub({
      config: configOf([stdio("everything", EVERYTHING, ["stdio"], { record })]),
      upstreamInterceptors: [recorder.interceptor],
    });
    recorder.attach(hub);
    try {
      await hub.start();
      const result = await hub.callTool("everything__echo", { message: "still served" });
      expect(result.content).toEqual([{ type: "text", text: "Echo: still served" }]);
      expect(failures).toHaveLength(1);
      expect(failures[0]![0]).toBe("everything");
      expect(failures[0]![1]).toContain(`cannot write the recording of everything in ${record.dir}`);
    } finally {
      await hub.close();
      recorder.close();
    }
  });
});

describe("a server that leaks its secret", () => {
  it("leaves none of the secret's encodings in its recording: errors, error results, log messages", async () => {
    const secret = "leak-4f1c2a9e7b3d8f60";
    const record = { dir: join(dir, "leaky"), redact: [] };
    const config = configOf(
      [
        stdio("leaky", process.execPath, ["test/fixtures/servers/leaky-server.mjs"], {
          env: { LEAK_TOKEN: secret },
          record,
        }),
      ],
      { secrets: [secret] },
    );
    const recorder = new TrafficRecorder({ recordOf: () => record, secrets: config.secrets });
    const hub = new Hub({ config, upstreamInterceptors: [recorder.interceptor] });
    recorder.attach(hub);
    const logged = new Promise<void>((resolve) => {
      const off = hub.on((event) => {
        if (event.type === "notification" && event.method === "notifications/message") {
          off();
          resolve();
        }
      });
    });
    try {
      await hub.start();
      await expect(hub.callTool("leaky__leak", {})).rejects.toBeInstanceOf(RpcError);
      expect((await hub.callTool("leaky__leak_result", {})).isError).toBe(true);
      await hub.callTool("leaky__leak_log", {});
      await logged;
    } finally {
      await hub.close();
      recorder.close();
    }
    const text = readFileSync(join(record.dir, "leaky.jsonl"), "utf8");
    const types = text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line).type);
    expect(types).toEqual(expect.arrayContaining(["error", "result", "notification"]));
    const b64 = (value: string) => Buffer.from(value).toString("base64");
    for (const form of [
      secret,
      b64(secret),
      Buffer.from(secret).toString("base64url"),
      encodeURIComponent(secret),
      b64(`x${secret}y`),
      b64(`xy${secret}z`),
      b64(`Authorization: Bearer ${secret}`),
    ])
      expect(text.includes(form), form).toBe(false);
  });
});
