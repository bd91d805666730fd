/**
 * The OpenAI chat-completions wire format, as far as mcplex uses it. Fields are typed
 * loosely where providers disagree (arguments as objects, missing indexes, null content).
 */

/** A function tool call in an assistant message. */
export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** One message of a conversation. */
export type ChatMessage =
  | { role: "system" | "developer"; content: string; name?: string }
  | { role: "user"; content: string | Array<Record<string, unknown>>; name?: string }
  | { role: "assistant"; content: string | null; tool_calls?: ChatToolCall[]; name?: string }
  | { role: "tool"; content: string; tool_call_id: string };

/** A tool definition in a request. */
export interface ChatTool {
  type: "function";
  function: { name: string; description?: string; parameters: Record<string, unknown>; strict?: boolean };
}

/** A request body for `POST /chat/completions`; unknown provider-specific fields pass through. */
export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ChatTool[];
  tool_choice?: unknown;
  parallel_tool_calls?: boolean;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [extra: string]: unknown;
}

/** Token usage as providers report it. */
export interface ChatUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  [extra: string]: unknown;
}

/** A tool-call fragment in a streamed delta; every field may be missing or oddly typed. */
export interface ChatToolCallDelta {
  index?: number;
  id?: string | null;
  type?: string;
  function?: { name?: string | null; arguments?: string | Record<string, unknown> | null };
}

/** One streamed chunk (`object: "chat.completion.chunk"`). */
export interface ChatCompletionChunk {
  id?: string;
  object?: string;
  created?: number;
  model?: string;
  choices: Array<{
    index?: number;
    delta: {
      role?: string;
      content?: string | null;
      reasoning_content?: string | null;
      tool_calls?: ChatToolCallDelta[] | null;
    };
    finish_reason?: string | null;
  }>;
  usage?: ChatUsage | null;
}

/** A non-streamed completion (`object: "chat.completion"`). */
export interface ChatCompletion {
  id?: string;
  object?: string;
  model?: string;
  choices: Array<{
    index?: number;
    message: {
      role: string;
      content?: string | null;
      tool_calls?: ChatToolCallDelta[] | null;
    };
    finish_reason?: string | null;
  }>;
  usage?: ChatUsage | null;
}
