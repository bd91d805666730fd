/**
 * Reads one model response (a chunk stream) into visible text, tool calls, the finish
 * reason and usage, keeping tool traffic out of the text.
 */
import type { ChatCompletionChunk, ChatUsage } from "./chat-types.js";
import { type TextToolCallMode, TextToolCallParser } from "./text-tool-call-parser.js";
import { type ParsedToolCall, ToolCallAccumulator } from "./tool-call-accumulator.js";

/** What one response amounted to. */
export interface ConsumedResponse {
  /** The text shown to the user (tool calls withheld). */
  text: string;
  /** Native calls first, then calls found in the text, in order of appearance. */
  calls: ParsedToolCall[];
  finishReason: string | undefined;
  usage: ChatUsage | undefined;
  /** True when tool-call fragments arrived (even if they came to nothing). */
  sawToolCalls: boolean;
}

/**
 * Consumes a chunk stream. `onText` gets each safe text delta as soon as it is decided.
 * Errors from the stream propagate; `emitted()` tells whether any text went out.
 */
export async function consumeResponse(
  chunks: AsyncIterable<ChatCompletionChunk>,
  options: { textToolCalls: TextToolCallMode; onText: (text: string) => void },
): Promise<ConsumedResponse> {
  const accumulator = new ToolCallAccumulator();
  const parser = new TextToolCallParser(options.textToolCalls);
  const textCalls: ParsedToolCall[] = [];
  let text = "";
  let finishReason: string | undefined;
  let usage: ChatUsage | undefined;
  const take = (out: { text: string; calls: ParsedToolCall[] }) => {
    textCalls.push(...out.calls);
    if (out.text !== "") {
      text += out.text;
      options.onText(out.text);
    }
  };
  for await (const chunk of chunks) {
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      if ((choice.index ?? 0) !== 0 || typeof choice.delta !== "object" || choice.delta === null) continue;
      const { content, tool_calls } = choice.delta;
      if (typeof content === "string" && content !== "") take(parser.push(content));
      accumulator.push(tool_calls);
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
  }
  take(parser.flush());
  const calls = [...accumulator.finish(), ...textCalls];
  return { text, calls, finishReason, usage, sawToolCalls: accumulator.started || textCalls.length > 0 };
}
