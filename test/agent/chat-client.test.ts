import { afterEach, describe, expect, it } from "vitest";
import { ChatClient } from "../../src/agent/chat-client.js";
import type { ChatCompletionChunk } from "../../src/agent/chat-types.js";
import { LlmError } from "../../src/agent/llm-error.js";
import { AbortedError } from "../../src/errors.js";
import type { MockLlmServer, MockLlmServerOptions } from "../../src/testing/mock-llm-server.js";
import { mockErrors, startMockLlm } from "../support/mock-llm.js";

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(options: MockLlmServerOptions) {
  server = await startMockLlm(options);
  return new ChatClient({ baseUrl: server.url, apiKey: "sk-test" });
}

const request = { model: "m", messages: [{ role: "user" as const, content: "hi" }] };

async function drain(client: ChatClient, signal?: AbortSignal) {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of client.stream(request, signal ? { signal } : {})) chunks.push(chunk);
  return chunks;
}

const textOf = (chunks: ChatCompletionChunk[]) =>
  chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");

async function failure(promise: Promise<unknown>): Promise<LlmError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LlmError);
  return error as LlmError;
}

describe("ChatClient", () => {
  it("streams chunks and sends the key, the model and stream: true", async () => {
    const client = await setup({ turns: [{ text: "Hello there" }] });
    const chunks = await drain(client);
    expect(textOf(chunks)).toBe("Hello there");
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("stop");
    expect(server!.requests[0]!.headers.authorization).toBe("Bearer sk-test");
    expect(server!.requests[0]!.body).toMatchObject({ model: "m", stream: true });
  });

  it.each([1, 2, 3, 5])(
    "reassembles UTF-8 and JSON split every %i bytes, skipping comment lines",
    async (chunkSize) => {
      const text = 'Grüße 👋🏽, "quoted" \\ and 日本語';
      const client = await setup({
        turns: [{ text, textChunkSize: 3 }],
        wire: { chunkSize, comments: true },
      });
      expect(textOf(await drain(client))).toBe(text);
    },
  );

  it("returns whole completions without streaming", async () => {
    const client = await setup({
      turns: [{ text: "Whole", usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }],
    });
    const completion = await client.complete(request);
    expect(completion.choices[0]?.message.content).toBe("Whole");
    expect(completion.usage?.total_tokens).toBe(3);
    expect(server!.requests[0]!.body.stream).toBe(false);
  });

  it("normalises OpenAI error bodies with status, message, type, param and a hint", async () => {
    const client = await setup({
      turns: [mockErrors.openai(401, "Incorrect API key provided", { code: "invalid_api_key" })],
    });
    const error = await failure(drain(client));
    expect(error).toMatchObject({
      kind: "http",
      status: 401,
      providerMessage: "Incorrect API key provided",
      providerType: "invalid_request_error",
      providerCode: "invalid_api_key",
      retryable: false,
    });
    expect(error.hint).toMatch(/API key/);
  });

  it("normalises Gemini's array-wrapped errors", async () => {
    const client = await setup({ turns: [mockErrors.gemini(400, "Invalid JSON payload received.")] });
    const error = await failure(drain(client));
    expect(error).toMatchObject({
      status: 400,
      providerMessage: "Invalid JSON payload received.",
      providerType: "INVALID_ARGUMENT",
    });
  });

  it("normalises FastAPI 422 details, naming the parameter", async () => {
    const client = await setup({ turns: [mockErrors.unknownField("stream_options")] });
    const error = await failure(drain(client));
    expect(error).toMatchObject({ status: 422, param: "stream_options" });
    expect(error.providerMessage).toMatch(/Extra inputs are not permitted/);
  });

  it("keeps non-JSON error bodies as the message", async () => {
    const client = await setup({ turns: [{ error: { status: 502, body: "<html>Bad gateway</html>" } }] });
    const error = await failure(drain(client));
    expect(error).toMatchObject({ status: 502, retryable: true });
  });

  it("reads Retry-After on 429 and marks it retryable", async () => {
    const client = await setup({ turns: [mockErrors.rateLimited(2)] });
    const error = await failure(drain(client));
    expect(error).toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 2000,
      providerCode: "rate_limit_exceeded",
    });
  });

  it("raises a mid-stream error object after the text before it", async () => {
    const client = await setup({
      turns: [
        {
          text: "partial",
          midStreamError: { error: { message: "overloaded", type: "server_error", code: 503 } },
        },
      ],
    });
    const seen: string[] = [];
    const error = await failure(
      (async () => {
        for await (const chunk of client.stream(request)) seen.push(chunk.choices[0]?.delta.content ?? "");
      })(),
    );
    expect(seen.join("")).toBe("partial");
    expect(error).toMatchObject({ kind: "stream", providerMessage: "overloaded", status: 503 });
  });

  it("reports a truncated stream instead of ending quietly", async () => {
    const client = await setup({ turns: [{ truncate: true, text: "cut off" }] });
    const error = await failure(drain(client));
    expect(error.kind).toBe("truncated");
  });

  it("accepts a stream without [DONE] when the finish chunk came", async () => {
    const client = await setup({ turns: [{ text: "ok", quirk: "no-done" }] });
    expect(textOf(await drain(client))).toBe("ok");
  });

  it("takes a JSON completion when the server ignores stream: true", async () => {
    server = await startMockLlm({ turns: [() => ({ sse: "" })] });
    const plain = await startMockLlm({ turns: [{ text: "not streamed" }] });
    try {
      const client = new ChatClient({
        baseUrl: plain.url,
        fetch: (url, init) =>
          fetch(url, { ...init, body: String(init?.body).replace('"stream":true', '"stream":false') }),
      });
      expect(textOf(await drain(client))).toBe("not streamed");
    } finally {
      await plain.close();
    }
  });

  it("does not retry on its own", async () => {
    const client = await setup({
      turns: [mockErrors.openai(500, "boom", { type: "server_error" }), { text: "never" }],
    });
    await failure(drain(client));
    expect(server!.requests).toHaveLength(1);
  });

  it("reports an unreachable server as a retryable network error", async () => {
    const client = await setup({});
    const url = server!.url;
    await server!.close();
    server = undefined;
    const error = await failure(drain(new ChatClient({ baseUrl: url })));
    expect(error).toMatchObject({ kind: "network", retryable: true });
    void client;
  });

  it("ends with an AbortedError when the signal aborts mid-stream", async () => {
    const client = await setup({
      turns: [{ text: "a slow answer that takes a while", textChunkSize: 1 }],
      wire: { delayMs: 20 },
    });
    const controller = new AbortController();
    const seen: string[] = [];
    const error = await (async () => {
      for await (const chunk of client.stream(request, { signal: controller.signal })) {
        seen.push(chunk.choices[0]?.delta.content ?? "");
        if (seen.join("").length >= 2) controller.abort();
      }
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortedError);
    expect(seen.join("").length).toBeLessThan("a slow answer that takes a while".length);
  });
});
