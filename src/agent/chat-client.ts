/**
 * A small fetch-based client for `POST {baseUrl}/chat/completions`, streaming and not.
 * It never retries on its own: the caller decides (see `runAgent`'s `retry` option).
 */
import { createParser } from "eventsource-parser";
import { AbortedError } from "../errors.js";
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest } from "./chat-types.js";
import { LlmError, llmErrorFromResponse, llmErrorFromStream } from "./llm-error.js";

/** Where and how to reach a chat-completions API. */
export interface ChatClientOptions {
  /** Base URL including the version segment, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer ...` when set. */
  apiKey?: string;
  /** Extra headers for every request (e.g. OpenRouter's `HTTP-Referer`). */
  headers?: Record<string, string>;
  /** A fetch implementation; defaults to the global one. */
  fetch?: typeof fetch;
}

/** Per-request options. */
export interface ChatRequestOptions {
  signal?: AbortSignal;
}

/**
 * Client for one OpenAI-compatible endpoint.
 *
 * @example
 * const client = new ChatClient({ baseUrl: "http://localhost:11434/v1" });
 * for await (const chunk of client.stream({ model: "qwen3", messages })) process.stdout.write(chunk.choices[0]?.delta.content ?? "");
 */
export class ChatClient {
  readonly baseUrl: string;
  readonly #options: ChatClientOptions;

  constructor(options: ChatClientOptions) {
    this.#options = options;
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
  }

  /** Sends a non-streaming request and returns the parsed completion. */
  async complete(request: ChatCompletionRequest, options: ChatRequestOptions = {}): Promise<ChatCompletion> {
    const response = await this.#post({ ...request, stream: false }, options.signal);
    const text = await readText(response, options.signal);
    const body = parseJson(text);
    if (!isCompletion(body)) {
      const err = body !== undefined && typeof body === "object" && body !== null && "error" in body;
      if (err) throw llmErrorFromStream(body);
      throw new LlmError("the response is not a chat completion", {
        kind: "parse",
        body: text.slice(0, 2000),
      });
    }
    return body;
  }

  /**
   * Sends a streaming request and yields each parsed chunk. Ends after `data: [DONE]`;
   * throws an {@link LlmError} for HTTP errors, mid-stream errors and truncated streams,
   * and an {@link AbortedError} when the signal aborts.
   */
  async *stream(
    request: ChatCompletionRequest,
    options: ChatRequestOptions = {},
  ): AsyncGenerator<ChatCompletionChunk, void, undefined> {
    const { signal } = options;
    const response = await this.#post({ ...request, stream: true }, signal);
    const contentType = response.headers.get("content-type") ?? "";
    if (contentType.includes("application/json")) {
      // Some servers ignore `stream: true` and answer with one completion.
      const text = await readText(response, signal);
      const body = parseJson(text);
      if (isCompletion(body)) {
        yield* completionToChunks(body);
        return;
      }
      throw llmErrorFromStream(body);
    }
    if (response.body === null) throw new LlmError("the response has no body", { kind: "truncated" });

    const pending: ChatCompletionChunk[] = [];
    let failure: LlmError | undefined;
    let done = false;
    let sawFinish = false;
    const parser = createParser({
      onEvent: (event) => {
        if (done || failure) return;
        const data = event.data.trim();
        if (data === "[DONE]") {
          done = true;
          return;
        }
        if (data === "") return;
        const payload = parseJson(data);
        if (payload === undefined) {
          failure = new LlmError("a stream event is not valid JSON", {
            kind: "parse",
            body: data.slice(0, 2000),
          });
          return;
        }
        if (event.event === "error" || isErrorPayload(payload)) {
          failure = llmErrorFromStream(payload);
          return;
        }
        const chunk = payload as ChatCompletionChunk;
        if (!Array.isArray(chunk.choices)) chunk.choices = [];
        if (chunk.choices.some((c) => c.finish_reason)) sawFinish = true;
        pending.push(chunk);
      },
    });

    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    try {
      while (!done && !failure) {
        const { value, done: ended } = await readChunk(reader, signal);
        if (ended) {
          parser.feed(decoder.decode());
          parser.feed("\n\n");
          break;
        }
        parser.feed(decoder.decode(value, { stream: true }));
        yield* drainPending(pending, signal);
      }
      yield* drainPending(pending, signal);
      if (failure) throw failure;
      if (!done && !sawFinish) {
        throw new LlmError(
          "the stream ended before the response was complete (no finish_reason, no [DONE])",
          {
            kind: "truncated",
            retryable: true,
          },
        );
      }
    } finally {
      reader.cancel().catch(() => {});
    }
  }

  async #post(body: ChatCompletionRequest, signal: AbortSignal | undefined): Promise<Response> {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: body.stream ? "text/event-stream" : "application/json",
      ...this.#options.headers,
    };
    if (this.#options.apiKey) headers.authorization = `Bearer ${this.#options.apiKey}`;
    const doFetch = this.#options.fetch ?? fetch;
    let response: Response;
    try {
      const init: RequestInit = { method: "POST", headers, body: JSON.stringify(body) };
      if (signal) init.signal = signal;
      response = await doFetch(`${this.baseUrl}/chat/completions`, init);
    } catch (error) {
      throw toTransportError(error, signal);
    }
    if (!response.ok) {
      const text = await readText(response, signal);
      throw llmErrorFromResponse(response.status, text, response.headers);
    }
    return response;
  }
}

function* drainPending(
  pending: ChatCompletionChunk[],
  signal: AbortSignal | undefined,
): Generator<ChatCompletionChunk> {
  while (pending.length > 0) {
    // An abort wins over chunks already received: the caller asked to stop.
    if (signal?.aborted)
      throw new AbortedError("the chat completion was aborted", {}, { cause: signal.reason });
    yield pending.shift()!;
  }
}

function toTransportError(error: unknown, signal: AbortSignal | undefined): Error {
  if (error instanceof LlmError || error instanceof AbortedError) return error;
  if (signal?.aborted)
    return new AbortedError("the chat completion was aborted", {}, { cause: signal.reason });
  const message = error instanceof Error ? error.message : String(error);
  return new LlmError(
    `could not reach the chat-completions API: ${message}`,
    { kind: "network" },
    { cause: error },
  );
}

async function readChunk(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  signal: AbortSignal | undefined,
): Promise<{ done: boolean; value?: Uint8Array }> {
  try {
    return await reader.read();
  } catch (error) {
    if (signal?.aborted) throw toTransportError(error, signal);
    throw new LlmError("the stream broke before the response was complete", {
      kind: "truncated",
      retryable: true,
    });
  }
}

async function readText(response: Response, signal: AbortSignal | undefined): Promise<string> {
  try {
    return await response.text();
  } catch (error) {
    throw toTransportError(error, signal);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isErrorPayload(payload: unknown): boolean {
  if (Array.isArray(payload)) return payload.length > 0 && isErrorPayload(payload[0]);
  return typeof payload === "object" && payload !== null && "error" in payload && !("choices" in payload);
}

function isCompletion(body: unknown): body is ChatCompletion {
  return typeof body === "object" && body !== null && Array.isArray((body as ChatCompletion).choices);
}

/** Turns a whole completion into the chunks a stream would have carried. */
export function completionToChunks(completion: ChatCompletion): ChatCompletionChunk[] {
  const chunks: ChatCompletionChunk[] = completion.choices.map((choice) => ({
    choices: [
      {
        index: choice.index ?? 0,
        delta: {
          role: "assistant",
          content: choice.message.content ?? null,
          tool_calls: choice.message.tool_calls ?? null,
        },
        finish_reason: choice.finish_reason ?? "stop",
      },
    ],
  }));
  if (completion.usage) chunks.push({ choices: [], usage: completion.usage });
  return chunks;
}
