/**
 * The tool loop: send the conversation and the catalog's tools to the model, run the
 * tools it calls (in parallel), send the results back, until it answers.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { AbortedError } from "../errors.js";
import type { AgentEvent, AgentOutcome, AgentUsage } from "./agent-events.js";
import { type AgentRun, createAgentRun, type EmitAgentEvent } from "./agent-run.js";
import { ChatClient, type ChatClientOptions, completionToChunks } from "./chat-client.js";
import type { ChatCompletionChunk, ChatCompletionRequest, ChatMessage, ChatUsage } from "./chat-types.js";
import { type ConsumedResponse, consumeResponse } from "./consume-response.js";
import { executeToolCall } from "./execute-tool-call.js";
import { LlmError } from "./llm-error.js";
import { detectRejectedParam } from "./rejected-param.js";
import { resolveSchemaProfile, type SchemaProfile } from "./schema-sanitizer.js";
import type { TextToolCallMode } from "./text-tool-call-parser.js";
import type { ToolHost } from "./tool-host.js";
import { ToolSet } from "./tool-set.js";

/** The LLM endpoint: a base URL, a model and optionally a key and provider family. */
export interface AgentLlm extends ChatClientOptions {
  model: string;
  /** Provider family (`gemini`, `strict`, `openai`, ...); picks schema handling. */
  provider?: string;
}

/** Options of {@link runAgent}. */
export interface RunAgentOptions {
  /** Where tools come from: the hub, or any {@link ToolHost}. */
  hub: ToolHost;
  llm: AgentLlm;
  /** The conversation so far (system prompt, user turns, earlier history). */
  messages: ChatMessage[];
  /** Catalog profile to list and call tools through. */
  profile?: string;
  signal?: AbortSignal;
  /** Most model requests in one run. Default 10. */
  maxSteps?: number;
  /** Stream responses (default) or request whole completions. */
  stream?: boolean;
  /** Schema handling; default from `llm.provider`, else from the base URL. */
  schemaProfile?: SchemaProfile;
  /** `auto` (default) narrows to search-then-call over `maxTools`; `all` fails instead; `search` always searches. */
  toolMode?: "auto" | "all" | "search";
  /** The provider's tool limit. Default 128 (OpenAI's). */
  maxTools?: number;
  /** Which tool calls written as text to recognise. Default `all`. */
  textToolCalls?: TextToolCallMode;
  /** Explicit, bounded retries on 429/5xx/network errors, each reported as a `retry` event. */
  retry?: { maxRetries?: number; baseDelayMs?: number; maxDelayMs?: number };
  /** Extra request body fields (`temperature`, `max_tokens`, ...). */
  body?: Record<string, unknown>;
  /** A client to use instead of one built from `llm`. */
  client?: ChatClient;
  /** Spans around the run, its model requests and its tool calls (mcplex's telemetry gives one). */
  tracer?: AgentTracer;
}

/**
 * Makes spans for an agent run: `span` runs `work` inside a span named `name` (a child of the
 * span active when it is called, and the parent of those `work` makes) and ends it with it.
 */
export interface AgentTracer {
  span<T>(name: string, attributes: Record<string, string | number>, work: () => Promise<T>): Promise<T>;
}

/** No spans: what a run without a tracer uses. */
const NO_TRACER: AgentTracer = { span: (_name, _attributes, work) => work() };

/**
 * Runs a conversation with tools. Never throws: failures arrive as `error` events and a
 * `done` event with the outcome.
 *
 * @example
 * const run = runAgent({ hub, llm: { baseUrl, model }, messages: [{ role: "user", content: "What is 2+3?" }] });
 * for await (const event of run) if (event.type === "text-delta") process.stdout.write(event.text);
 */
export function runAgent(options: RunAgentOptions): AgentRun {
  const tracer = options.tracer ?? NO_TRACER;
  const model = options.llm.model ?? "";
  return createAgentRun((emit) =>
    tracer.span(
      "invoke_agent mcplex",
      { "gen_ai.operation.name": "invoke_agent", "gen_ai.request.model": model },
      () => drive(options, emit, tracer),
    ),
  );
}

async function drive(options: RunAgentOptions, emit: EmitAgentEvent, tracer: AgentTracer): Promise<void> {
  const { hub, signal } = options;
  const client = options.client ?? new ChatClient(options.llm);
  const maxSteps = options.maxSteps ?? 10;
  const messages = [...options.messages];
  const usage: AgentUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  const dropped = new Set<string>();
  let step = 0;
  let text = "";
  const done = (outcome: AgentOutcome, error?: Error) => {
    const event: AgentEvent = { type: "done", outcome, steps: step, usage, messages, text };
    if (error) event.error = error;
    emit(event);
  };

  try {
    const tools = await ToolSet.load(hub, {
      profile: options.profile,
      schemaProfile: options.schemaProfile ?? resolveSchemaProfile(options.llm),
      toolMode: options.toolMode ?? "auto",
      maxTools: options.maxTools ?? 128,
      ...(signal === undefined ? {} : { signal }),
    });
    for (const notice of tools.notices) emit(notice);
    while (true) {
      signal?.throwIfAborted();
      if (step >= maxSteps) return done("max-steps");
      step++;
      emit({ type: "step-start", step });
      const request: ChatCompletionRequest = {
        ...options.body,
        model: options.llm.model,
        messages: [...messages],
      };
      const chatTools = dropped.has("tools") ? [] : tools.chatTools();
      if (chatTools.length > 0) request.tools = chatTools;
      const streaming = options.stream ?? true;
      if (streaming && !dropped.has("stream_options")) request.stream_options = { include_usage: true };
      const response = await tracer.span(
        `chat ${request.model ?? ""}`.trim(),
        { "gen_ai.operation.name": "chat", "gen_ai.request.model": request.model ?? "" },
        () => requestStep(client, request, { options, emit, step, dropped, streaming }),
      );
      addUsage(usage, response.usage);
      text = response.text;
      const truncatedCall = response.finishReason === "length" && response.sawToolCalls;
      const calls = truncatedCall ? [] : response.calls;
      messages.push(
        calls.length > 0
          ? {
              role: "assistant",
              content: response.text === "" ? null : response.text,
              tool_calls: calls.map((c) => ({
                id: c.id,
                type: "function",
                function: { name: c.name, arguments: c.arguments },
              })),
            }
          : { role: "assistant", content: response.text },
      );
      emit({
        type: "step-end",
        step,
        finishReason: response.finishReason,
        usage: response.usage,
        toolCalls: calls.length,
      });
      if (truncatedCall) {
        const error = new LlmError(
          "the model ran out of output tokens inside a tool call; no call was executed",
          {
            kind: "length",
            retryable: false,
          },
        );
        emit({ type: "error", step, error, fatal: true });
        return done("length", error);
      }
      if (calls.length === 0) return done(response.finishReason === "length" ? "length" : "stop");
      for (const call of calls) {
        emit({
          type: "tool-call",
          step,
          toolCallId: call.id,
          toolName: call.name,
          input: call.input,
          rawArguments: call.arguments,
          source: call.source,
        });
      }
      const context = tools.executionContext(hub, options.profile, signal);
      const outcomes = await Promise.all(
        calls.map(async (call) => {
          const outcome = await tracer.span(
            `execute_tool ${call.name}`,
            {
              "gen_ai.operation.name": "execute_tool",
              "gen_ai.tool.name": call.name,
              "gen_ai.tool.call.id": call.id,
            },
            () => executeToolCall(call, context),
          );
          const event: AgentEvent = {
            type: "tool-result",
            step,
            toolCallId: call.id,
            toolName: call.name,
            isError: outcome.isError,
            output: outcome.output,
          };
          if (outcome.result) event.result = outcome.result;
          emit(event);
          return outcome;
        }),
      );
      calls.forEach((call, i) => {
        messages.push({ role: "tool", tool_call_id: call.id, content: outcomes[i]!.output });
      });
    }
  } catch (error) {
    if (signal?.aborted || error instanceof AbortedError) {
      const aborted =
        error instanceof AbortedError
          ? error
          : new AbortedError("the run was aborted", {}, { cause: signal?.reason });
      return done("aborted", aborted);
    }
    const err = error instanceof Error ? error : new Error(String(error));
    emit({ type: "error", step, error: err, fatal: true });
    return done("error", err);
  }
}

interface StepContext {
  options: RunAgentOptions;
  emit: EmitAgentEvent;
  step: number;
  dropped: Set<string>;
  streaming: boolean;
}

/** One model request with explicit retries and rejected-parameter fallbacks. */
async function requestStep(
  client: ChatClient,
  request: ChatCompletionRequest,
  ctx: StepContext,
): Promise<ConsumedResponse> {
  const { options, emit, step, dropped } = ctx;
  const signal = options.signal;
  const maxRetries = options.retry?.maxRetries ?? 2;
  const baseDelay = options.retry?.baseDelayMs ?? 500;
  const maxDelay = options.retry?.maxDelayMs ?? 8000;
  const toolsOffered = request.tools !== undefined;
  let retries = 0;
  while (true) {
    let emitted = false;
    const onText = (text: string) => {
      emitted = true;
      emit({ type: "text-delta", step, text });
    };
    try {
      const requestOptions = signal ? { signal } : {};
      const chunks: AsyncIterable<ChatCompletionChunk> = ctx.streaming
        ? client.stream(request, requestOptions)
        : completionChunks(client, request, requestOptions);
      return await consumeResponse(chunks, {
        textToolCalls: toolsOffered && !dropped.has("tools") ? (options.textToolCalls ?? "all") : "off",
        onText,
      });
    } catch (error) {
      if (!(error instanceof LlmError) || emitted || signal?.aborted) throw error;
      const param = detectRejectedParam(error, request);
      if (param !== undefined && !dropped.has(param)) {
        dropped.add(param);
        delete request[param];
        if (param === "tools") {
          delete request.tool_choice;
          delete request.parallel_tool_calls;
          emit({
            type: "notice",
            code: "tools-unsupported",
            param,
            message: `The provider rejected tools (${error.providerMessage ?? error.message}); continuing as plain chat without tools.`,
          });
        } else {
          emit({
            type: "notice",
            code: "param-dropped",
            param,
            message: `The provider rejected "${param}" (${error.providerMessage ?? error.message}); retrying without it.`,
          });
        }
        continue;
      }
      if (!error.retryable || retries >= maxRetries) throw error;
      retries++;
      const delayMs = Math.min(maxDelay, error.retryAfterMs ?? baseDelay * 2 ** (retries - 1));
      emit({ type: "retry", step, attempt: retries, delayMs, error });
      if (delayMs > 0) await sleep(delayMs, undefined, signal ? { signal } : {});
    }
  }
}

async function* completionChunks(
  client: ChatClient,
  request: ChatCompletionRequest,
  options: { signal?: AbortSignal },
): AsyncGenerator<ChatCompletionChunk> {
  yield* completionToChunks(await client.complete(request, options));
}

function addUsage(total: AgentUsage, usage: ChatUsage | undefined): void {
  if (!usage) return;
  total.promptTokens += usage.prompt_tokens ?? 0;
  total.completionTokens += usage.completion_tokens ?? 0;
  total.totalTokens += usage.total_tokens ?? (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0);
}
