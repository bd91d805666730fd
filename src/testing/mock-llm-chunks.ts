/**
 * Scripted replies of the mock chat-completions server turned into exact OpenAI chunk
 * sequences — or into the odd sequences real providers send (the quirk modes).
 */
import type { ChatUsage } from "../agent/chat-types.js";

/** Provider quirks the mock can reproduce, one per reply. */
export type MockQuirk =
  | "none"
  /** Tool-call fragments without `index` (some Gemini and proxy versions). */
  | "missing-index"
  /** Every call at `index: 0`, told apart only by id. */
  | "same-index"
  /** Each call whole in one fragment, all in one chunk. */
  | "whole-calls"
  /** The first fragment of a call has no name; it comes with the next one. */
  | "late-name"
  /** `arguments` as a JSON object, not a string (Ollama style). */
  | "object-arguments"
  /** Calls without arguments send `""` rather than `"{}"`. */
  | "empty-arguments"
  /** Every id is `""`. */
  | "empty-ids"
  /** Every call has the same id. */
  | "duplicate-ids"
  /** `finish_reason: "stop"` after tool calls. */
  | "stop-after-tool-calls"
  /** The stream stops inside the last call's arguments with `finish_reason: "length"`. */
  | "length-in-arguments"
  /** Calls written into the text as `<tool_call>{...}</tool_call>`. */
  | "text-tags"
  /** Calls written into the text as bare `{"name":...,"arguments":...}`. */
  | "text-json"
  /** No `data: [DONE]` at the end (the finish chunk still comes). */
  | "no-done";

/** A tool call the mock model makes. */
export interface MockToolCall {
  name: string;
  /** An object (serialised for the wire) or the exact argument text. */
  arguments?: Record<string, unknown> | string;
  id?: string;
}

/** A scripted model reply. */
export interface MockReply {
  text?: string;
  toolCalls?: MockToolCall[];
  /** Default: `tool_calls` with calls, else `stop`. */
  finishReason?: string;
  /** Usage to report; `false` for none. Sent as a final chunk when `stream_options.include_usage` is set. */
  usage?: ChatUsage | false;
  quirk?: MockQuirk;
  /** Characters of text per content delta. Default 4. */
  textChunkSize?: number;
  /** Characters of argument JSON per fragment. Default 7. */
  argsChunkSize?: number;
}

/** Chunk and completion metadata. */
export interface ChunkMeta {
  id: string;
  model: string;
  created: number;
  includeUsage: boolean;
}

type Fragment = Record<string, unknown>;

const DEFAULT_USAGE: ChatUsage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function argsText(call: MockToolCall, quirk: MockQuirk): string {
  if (typeof call.arguments === "string") return call.arguments;
  const text = JSON.stringify(call.arguments ?? {});
  return quirk === "empty-arguments" && text === "{}" ? "" : text;
}

function pieces(text: string, size: number): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}

function callId(call: MockToolCall, i: number, quirk: MockQuirk): string {
  if (quirk === "empty-ids") return "";
  if (quirk === "duplicate-ids") return "call_dup";
  return call.id ?? `call_mock_${i}`;
}

/** The text a model writes when it puts tool calls into its content. */
export function toolCallsAsText(calls: MockToolCall[], quirk: "text-tags" | "text-json"): string {
  return calls
    .map((call) => {
      const json = JSON.stringify({ name: call.name, arguments: call.arguments ?? {} });
      return quirk === "text-tags" ? `<tool_call>\n${json}\n</tool_call>` : json;
    })
    .join("\n");
}

/** The `delta.tool_calls` lists, one per chunk, for a reply's calls under a quirk. */
function toolCallDeltas(calls: MockToolCall[], quirk: MockQuirk, argsChunkSize: number): Fragment[][] {
  if (quirk === "whole-calls" || quirk === "object-arguments") {
    return [
      calls.map((call, i) => ({
        index: i,
        id: callId(call, i, quirk),
        type: "function",
        function: {
          name: call.name,
          arguments:
            quirk === "object-arguments" ? JSON.parse(argsText(call, "none")) : argsText(call, quirk),
        },
      })),
    ];
  }
  const deltas: Fragment[][] = [];
  calls.forEach((call, i) => {
    const index = quirk === "same-index" ? 0 : i;
    const head: Fragment = {
      index,
      id: callId(call, i, quirk),
      type: "function",
      function: { name: call.name, arguments: "" },
    };
    const parts = pieces(argsText(call, quirk), argsChunkSize);
    if (quirk === "length-in-arguments" && i === calls.length - 1)
      parts.splice(Math.max(1, Math.ceil(parts.length / 2)));
    if (quirk === "late-name") {
      head.function = { arguments: "" };
      deltas.push([head], [{ index, function: { name: call.name, arguments: parts.shift() ?? "" } }]);
    } else {
      deltas.push([head]);
    }
    for (const part of parts) deltas.push([{ index, function: { arguments: part } }]);
  });
  if (quirk === "missing-index") for (const list of deltas) for (const f of list) delete f.index;
  return deltas;
}

function effective(reply: MockReply): { text: string; calls: MockToolCall[]; quirk: MockQuirk } {
  const quirk = reply.quirk ?? "none";
  const calls = reply.toolCalls ?? [];
  if ((quirk === "text-tags" || quirk === "text-json") && calls.length > 0) {
    const prefix = reply.text ? `${reply.text}\n` : "";
    return { text: prefix + toolCallsAsText(calls, quirk), calls: [], quirk };
  }
  return { text: reply.text ?? "", calls, quirk };
}

function finishReasonOf(reply: MockReply, hasCalls: boolean, quirk: MockQuirk): string {
  if (reply.finishReason) return reply.finishReason;
  if (quirk === "length-in-arguments") return "length";
  if (quirk === "stop-after-tool-calls") return "stop";
  return hasCalls ? "tool_calls" : "stop";
}

/** The chunk objects of a streamed reply, in order (without the `[DONE]` marker). */
export function replyToChunks(reply: MockReply, meta: ChunkMeta): Fragment[] {
  const { text, calls, quirk } = effective(reply);
  const base = { id: meta.id, object: "chat.completion.chunk", created: meta.created, model: meta.model };
  const usageNull = meta.includeUsage ? { usage: null } : {};
  const chunk = (delta: Fragment, finish: string | null = null): Fragment => ({
    ...base,
    system_fingerprint: "fp_mock",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...usageNull,
  });
  const chunks: Fragment[] = [
    chunk({ role: "assistant", content: calls.length > 0 && !text ? null : "", refusal: null }),
  ];
  for (const part of pieces(text, reply.textChunkSize ?? 4)) chunks.push(chunk({ content: part }));
  for (const toolCalls of toolCallDeltas(calls, quirk, reply.argsChunkSize ?? 7))
    chunks.push(chunk({ tool_calls: toolCalls }));
  chunks.push(chunk({}, finishReasonOf(reply, calls.length > 0, quirk)));
  if (meta.includeUsage && reply.usage !== false) {
    chunks.push({ ...base, system_fingerprint: "fp_mock", choices: [], usage: reply.usage ?? DEFAULT_USAGE });
  }
  return chunks;
}

/** The `chat.completion` body of a non-streamed reply. */
export function replyToCompletion(reply: MockReply, meta: ChunkMeta): Fragment {
  const { text, calls, quirk } = effective(reply);
  const message: Fragment = {
    role: "assistant",
    content: calls.length > 0 && !text ? null : text,
    refusal: null,
  };
  if (calls.length > 0) {
    message.tool_calls = calls.map((call, i) => ({
      id: callId(call, i, quirk),
      type: "function",
      function: {
        name: call.name,
        arguments: quirk === "object-arguments" ? JSON.parse(argsText(call, "none")) : argsText(call, quirk),
      },
    }));
  }
  const body: Fragment = {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    choices: [
      { index: 0, message, logprobs: null, finish_reason: finishReasonOf(reply, calls.length > 0, quirk) },
    ],
  };
  if (reply.usage !== false) body.usage = reply.usage ?? DEFAULT_USAGE;
  return body;
}

/** Error turns with the bodies providers really send. */
export const mockErrors = {
  /** OpenAI's `{"error":{message,type,param,code}}`. */
  openai: (
    status: number,
    message: string,
    extra: { type?: string; param?: string | null; code?: string | null } = {},
  ) => ({
    error: {
      status,
      body: {
        error: {
          message,
          type: extra.type ?? "invalid_request_error",
          param: extra.param ?? null,
          code: extra.code ?? null,
        },
      },
    },
  }),
  /** Gemini's compatible endpoint: the error wrapped in an array. */
  gemini: (status: number, message: string, statusText = "INVALID_ARGUMENT") => ({
    error: { status, body: [{ error: { code: status, message, status: statusText } }] },
  }),
  /** Ollama with a model that has no tool template. */
  ollamaNoTools: (model = "gemma:2b") => ({
    error: { status: 400, body: { error: `registry.ollama.ai/library/${model} does not support tools` } },
  }),
  /** llama.cpp server started without `--jinja`. */
  llamaCppJinja: () => ({
    error: {
      status: 500,
      body: { error: { code: 500, message: "tools param requires --jinja flag", type: "server_error" } },
    },
  }),
  /** A FastAPI/pydantic 422 for a field the server does not know (vLLM-style proxies). */
  unknownField: (field: string) => ({
    error: {
      status: 422,
      body: {
        detail: [
          { type: "extra_forbidden", loc: ["body", field], msg: "Extra inputs are not permitted", input: {} },
        ],
      },
    },
  }),
  /** A 429 with `Retry-After`. */
  rateLimited: (retryAfterSeconds = 0) => ({
    error: {
      status: 429,
      headers: { "retry-after": String(retryAfterSeconds) },
      body: {
        error: {
          message: "Rate limit reached for requests",
          type: "requests",
          param: null,
          code: "rate_limit_exceeded",
        },
      },
    },
  }),
};
