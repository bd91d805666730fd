/**
 * Recognises a provider refusing a request parameter, so the loop can drop it and retry
 * once instead of failing: Ollama's "does not support tools", llama.cpp's "--jinja",
 * vLLM's auto tool choice, a 422 on an unknown field.
 */
import type { ChatCompletionRequest } from "./chat-types.js";
import type { LlmError } from "./llm-error.js";

/** Optional parameters the loop may send and can live without. */
export const DROPPABLE_PARAMS = ["stream_options", "parallel_tool_calls", "tool_choice", "tools"] as const;

const TOOLS_REJECTED = [
  /does not support (?:tools|tool[ _-]?(?:calling|calls|use)|function(?:s| calling))/i,
  /--jinja/i,
  /tool[ _-]?choice requires --enable-auto-tool-choice/i,
  /\btools?\b[^.]{0,40}\bnot (?:supported|enabled|available)/i,
  /(?:function|tool) calling is not (?:supported|enabled)/i,
];
const UNKNOWN_FIELD =
  /unknown|unrecognized|unsupported|not supported|extra|not permitted|not allowed|unexpected/i;

/**
 * The parameter the provider rejected (`"tools"` when it rejected tool calling as such),
 * or undefined when the error is about something else.
 *
 * @example detectRejectedParam(err, request) === "stream_options" // drop it and retry
 */
export function detectRejectedParam(error: LlmError, request: ChatCompletionRequest): string | undefined {
  if (error.kind !== "http" || error.status === undefined) return undefined;
  if (![400, 404, 422, 500, 501].includes(error.status)) return undefined;
  const sent = DROPPABLE_PARAMS.filter((param) => request[param] !== undefined);
  if (sent.length === 0) return undefined;
  const message = `${error.providerMessage ?? ""} ${error.body ?? ""}`;
  if (error.param !== undefined && (sent as readonly string[]).includes(error.param)) return error.param;
  if (sent.includes("tools") && TOOLS_REJECTED.some((re) => re.test(message))) return "tools";
  if (!UNKNOWN_FIELD.test(message)) return undefined;
  // Longest names first, so `tool_choice` is not taken for `tools`.
  return [...sent].sort((a, b) => b.length - a.length).find((param) => message.includes(param));
}
