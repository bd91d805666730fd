import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunAgentOptions, runAgent } from "../../src/agent/run-agent.js";
import type { ToolHost } from "../../src/agent/tool-host.js";
import { searchToolsTool } from "../../src/catalog/search-tools-tool.js";
import type { MockTurn } from "../../src/testing/mock-llm-server.js";
import { createHubToolHost, defaultServers, type HubToolHost } from "../support/hub-tool-host.js";
import { collect, collectText, mockErrors, ofType, startMockLlm, toolMessages } from "../support/mock-llm.js";

let host: HubToolHost;
let cleanup: () => void;
let llm: Awaited<ReturnType<typeof startMockLlm>> | undefined;

beforeAll(async () => {
  const servers = defaultServers();
  cleanup = servers.cleanup;
  host = await createHubToolHost(servers.servers);
});
afterAll(async () => {
  await host?.close();
  cleanup?.();
});
afterEach(async () => {
  await llm?.close();
  llm = undefined;
});

const ask = [{ role: "user" as const, content: "Please help." }];

async function start(turns: MockTurn[], extra: Partial<RunAgentOptions> = {}) {
  llm = await startMockLlm({ turns });
  const run = runAgent({ hub: host, llm: llm.llm, messages: ask, retry: { baseDelayMs: 0 }, ...extra });
  return { run, events: await collect(run), done: await run.result };
}

describe("runAgent", () => {
  it("streams a plain answer and ends with the whole history and usage", async () => {
    const { events, done, run } = await start([
      { text: "Hello, world!", usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } },
    ]);
    expect(await collectText(run)).toBe("Hello, world!");
    expect(events.map((e) => e.type)).toEqual([
      "step-start",
      ...Array(4).fill("text-delta"),
      "step-end",
      "done",
    ]);
    expect(ofType(events, "step-end")[0]).toMatchObject({
      finishReason: "stop",
      usage: { total_tokens: 10 },
      toolCalls: 0,
    });
    expect(done).toMatchObject({
      outcome: "stop",
      steps: 1,
      text: "Hello, world!",
      usage: { totalTokens: 10 },
    });
    expect(done.messages).toEqual([...ask, { role: "assistant", content: "Hello, world!" }]);
    const sent = llm!.requests[0]!.body;
    expect(sent.stream_options).toEqual({ include_usage: true });
    expect(sent.tools?.map((t) => t.function.name)).toContain("everything__get-sum");
    expect(sent.tools?.map((t) => t.function.name)).toContain("memory__read_graph");
  });

  it("runs the tools of one step in parallel and returns results in call order", async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const counting: ToolHost = {
      tools: (profile) => host.tools(profile),
      callTool: async (name, args, options) => {
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        try {
          return await host.callTool(name, args, options);
        } finally {
          inFlight--;
        }
      },
    };
    const { events } = await start(
      [
        {
          toolCalls: [
            { name: "everything__echo", arguments: { message: "first" } },
            { name: "everything__get-sum", arguments: { a: 40, b: 2 } },
            { name: "everything__echo", arguments: { message: "third" } },
          ],
        },
        { text: "Done." },
      ],
      { hub: counting },
    );
    expect(maxInFlight).toBe(3);
    expect(ofType(events, "tool-call").map((e) => e.toolName)).toEqual([
      "everything__echo",
      "everything__get-sum",
      "everything__echo",
    ]);
    expect(toolMessages(llm!.requests[1]!.body).map((m) => m.content)).toEqual([
      "Echo: first",
      "The sum of 40 and 2 is 42.",
      "Echo: third",
    ]);
  });

  it("tells the model about an unknown tool, listing valid names, and continues", async () => {
    const { events, done } = await start([
      { toolCalls: [{ name: "everything__nope", arguments: {} }] },
      { text: "Sorry." },
    ]);
    const result = ofType(events, "tool-result")[0]!;
    expect(result).toMatchObject({ isError: true, toolName: "everything__nope" });
    expect(result.output).toMatch(/no tool named "everything__nope".*everything__echo/);
    expect(toolMessages(llm!.requests[1]!.body)[0]!.content).toBe(result.output);
    expect(done.outcome).toBe("stop");
  });

  it("tells the model its arguments were invalid JSON, and continues", async () => {
    const { events, done } = await start([
      { toolCalls: [{ name: "everything__echo", arguments: '{"message": "oops' }] },
      { text: "Retrying later." },
    ]);
    expect(ofType(events, "tool-call")[0]!.input).toBeUndefined();
    expect(ofType(events, "tool-result")[0]!.output).toMatch(/not valid JSON/);
    expect(host.calls.some((c) => c.args.message === "oops")).toBe(false);
    expect(done.outcome).toBe("stop");
  });

  it("passes tool errors back to the model as error results", async () => {
    const { events, done } = await start([
      { toolCalls: [{ name: "everything__get-sum", arguments: { a: "x" } }] },
      { text: "Hmm." },
    ]);
    const result = ofType(events, "tool-result")[0]!;
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/^Error: /);
    expect(done.outcome).toBe("stop");
  });

  it("summarises images and sends structuredContent as JSON", async () => {
    await start([
      {
        toolCalls: [
          { name: "everything__get-tiny-image", arguments: {} },
          { name: "everything__get-structured-content", arguments: { location: "Chicago" } },
        ],
      },
      { text: "Nice." },
    ]);
    const [image, structured] = toolMessages(llm!.requests[1]!.body);
    expect(image!.content).toMatch(/\[image: image\/png, [\d.]+ (kB|B)\]/);
    expect(image!.content).not.toMatch(/iVBOR/);
    expect(JSON.parse(structured!.content)).toHaveProperty("temperature");
  });

  it("stops at maxSteps while the model still wants tools", async () => {
    const again: MockTurn = { toolCalls: [{ name: "everything__echo", arguments: { message: "again" } }] };
    const { done } = await start([again, again, again, again], { maxSteps: 2 });
    expect(done).toMatchObject({ outcome: "max-steps", steps: 2 });
    expect(llm!.requests).toHaveLength(2);
  });

  it("reports finish_reason length inside arguments as an error and runs nothing", async () => {
    const before = host.calls.length;
    const { events, done } = await start([
      {
        quirk: "length-in-arguments",
        toolCalls: [{ name: "everything__echo", arguments: { message: "a long message" } }],
      },
    ]);
    expect(ofType(events, "error")[0]!.error).toMatchObject({ kind: "length" });
    expect(ofType(events, "tool-call")).toHaveLength(0);
    expect(host.calls.length).toBe(before);
    expect(done.outcome).toBe("length");
  });

  it("works without streaming", async () => {
    const { done, events } = await start(
      [{ toolCalls: [{ name: "everything__get-sum", arguments: { a: 1, b: 1 } }] }, { text: "Two." }],
      { stream: false },
    );
    expect(done).toMatchObject({ outcome: "stop", text: "Two." });
    expect(ofType(events, "tool-result")[0]!.output).toBe("The sum of 1 and 1 is 2.");
    expect(llm!.requests[0]!.body.stream).toBe(false);
    expect(llm!.requests[0]!.body.stream_options).toBeUndefined();
  });
});

describe("runAgent when the provider refuses", () => {
  it.each([
    ["Ollama's does not support tools", mockErrors.ollamaNoTools()],
    ["llama.cpp's --jinja error", mockErrors.llamaCppJinja()],
  ])("drops tools after %s and continues as plain chat, saying so", async (_name, rejection) => {
    const { events, done } = await start([rejection, { text: "Plain answer." }]);
    expect(ofType(events, "notice")).toMatchObject([{ code: "tools-unsupported", param: "tools" }]);
    expect(ofType(events, "retry")).toHaveLength(0);
    expect(llm!.requests[0]!.body.tools).toBeDefined();
    expect(llm!.requests[1]!.body.tools).toBeUndefined();
    expect(done).toMatchObject({ outcome: "stop", text: "Plain answer." });
  });

  it("drops a parameter rejected with a 422 and retries once, keeping tools", async () => {
    const { events, done } = await start([mockErrors.unknownField("stream_options"), { text: "ok" }]);
    expect(ofType(events, "notice")).toMatchObject([{ code: "param-dropped", param: "stream_options" }]);
    expect(llm!.requests[1]!.body.stream_options).toBeUndefined();
    expect(llm!.requests[1]!.body.tools).toBeDefined();
    expect(done.outcome).toBe("stop");
  });

  it("retries 429 explicitly and visibly", async () => {
    const { events, done } = await start([mockErrors.rateLimited(0), { text: "after the wait" }]);
    expect(ofType(events, "retry")).toMatchObject([{ attempt: 1, delayMs: 0, error: { status: 429 } }]);
    expect(done).toMatchObject({ outcome: "stop", text: "after the wait" });
  });

  it("gives up after the bounded retries with an error outcome", async () => {
    const boom = mockErrors.openai(503, "overloaded", { type: "server_error" });
    const { events, done } = await start([boom, boom, boom, { text: "never" }], {
      retry: { maxRetries: 2, baseDelayMs: 0 },
    });
    expect(ofType(events, "retry")).toHaveLength(2);
    expect(ofType(events, "error")[0]!.error).toMatchObject({ status: 503, providerMessage: "overloaded" });
    expect(done.outcome).toBe("error");
    expect(llm!.requests).toHaveLength(3);
  });

  it("does not retry a stream that failed after text went out", async () => {
    const { events, done } = await start([
      { text: "Half an ans", midStreamError: { error: { message: "boom", code: 500 } } },
      { text: "x" },
    ]);
    expect(ofType(events, "retry")).toHaveLength(0);
    expect(ofType(events, "error")[0]!.error).toMatchObject({ kind: "stream", providerMessage: "boom" });
    expect(done.outcome).toBe("error");
    expect(llm!.requests).toHaveLength(1);
  });
});

describe("runAgent aborts", () => {
  it("ends a slow stream with the aborted outcome", async () => {
    llm = await startMockLlm({
      turns: [{ text: "one two three four five six seven", textChunkSize: 1, wire: { delayMs: 20 } }],
    });
    const controller = new AbortController();
    const run = runAgent({ hub: host, llm: llm.llm, messages: ask, signal: controller.signal });
    const events = [];
    for await (const event of run) {
      events.push(event);
      if (event.type === "text-delta") controller.abort();
    }
    expect(events.at(-1)).toMatchObject({ type: "done", outcome: "aborted" });
    expect((await run.result).error).toMatchObject({ code: "REQUEST_ABORTED" });
  });

  it("aborts a running tool call", async () => {
    llm = await startMockLlm({
      turns: [
        {
          toolCalls: [
            { name: "everything__trigger-long-running-operation", arguments: { duration: 30, steps: 30 } },
          ],
        },
      ],
    });
    const controller = new AbortController();
    const run = runAgent({ hub: host, llm: llm.llm, messages: ask, signal: controller.signal });
    for await (const event of run) if (event.type === "tool-call") controller.abort();
    expect(await run.result).toMatchObject({ outcome: "aborted", steps: 1 });
  });
});

describe("runAgent tool selection", () => {
  it("narrows to search-then-call over the tool limit, and says so", async () => {
    const { events, done } = await start(
      [
        { toolCalls: [{ name: "search_tools", arguments: { query: "sum numbers" } }] },
        { toolCalls: [{ name: "everything__get-sum", arguments: { a: 5, b: 6 } }] },
        { text: "Eleven." },
      ],
      { maxTools: 5 },
    );
    expect(ofType(events, "notice")[0]).toMatchObject({ code: "too-many-tools" });
    expect(ofType(events, "notice")[0]!.message).toMatch(/profile/);
    expect(llm!.requests[0]!.body.tools!.map((t) => t.function.name)).toEqual(["search_tools"]);
    expect(llm!.requests[1]!.body.tools!.map((t) => t.function.name)).toContain("everything__get-sum");
    expect(ofType(events, "tool-result")[1]!.output).toBe("The sum of 5 and 6 is 11.");
    expect(done.outcome).toBe("stop");
  });

  it("offers the catalog's one search_tools, and answers a call without a query with what it needs", async () => {
    const { events, done } = await start(
      [
        { toolCalls: [{ name: "search_tools", arguments: { limit: 3 } }] },
        { toolCalls: [{ name: "search_tools", arguments: { query: "sum numbers", limit: 3 } }] },
        { text: "Done." },
      ],
      { toolMode: "search" },
    );
    // The same definition the gateway's search and code views list (test/gateway/catalog-modes.test.ts).
    const offered = llm!.requests[0]!.body.tools![0]!.function;
    expect(offered).toMatchObject({ name: "search_tools", description: searchToolsTool.description });
    expect(Object.keys((offered.parameters as { properties: object }).properties)).toEqual([
      "query",
      "server",
      "limit",
    ]);
    const [refused, found] = ofType(events, "tool-result");
    expect(refused).toMatchObject({ isError: true, output: expect.stringMatching(/needs `query`/) });
    expect(found!.isError).toBe(false);
    expect(JSON.parse(found!.output.replace("These tools can now be called: ", ""))).toHaveLength(3);
    expect(done.outcome).toBe("stop");
  });

  it("fails with a hint over the tool limit when narrowing is off", async () => {
    const { events, done } = await start([{ text: "never" }], { maxTools: 5, toolMode: "all" });
    expect(ofType(events, "error")[0]!.error).toMatchObject({ hint: expect.stringMatching(/profile/) });
    expect(done.outcome).toBe("error");
    expect(llm!.requests).toHaveLength(0);
  });

  it("sends Gemini-safe schemas to a Gemini provider", async () => {
    llm = await startMockLlm({ turns: [{ text: "ok" }] });
    const run = runAgent({ hub: host, llm: { ...llm.llm, provider: "gemini" }, messages: ask });
    await run.result;
    const tools = llm.requests[0]!.body.tools!;
    const text = JSON.stringify(tools);
    expect(text).not.toMatch(/\$schema|additionalProperties|"default"/);
    const readGraph = tools.find((t) => t.function.name === "memory__read_graph")!;
    expect(readGraph.function.parameters).toEqual({ type: "object" });
  });
});
