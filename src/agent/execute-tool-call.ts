/**
 * Runs one tool call against the tool host and turns whatever happens into the text the
 * model sees next. Unknown names, bad arguments and tool failures become tool results
 * that say what was wrong; only an abort escapes.
 */
import type { CallToolResult } from "@modelcontextprotocol/client";
import { AbortedError } from "../errors.js";
import type { ParsedToolCall } from "./tool-call-accumulator.js";
import type { ToolHost } from "./tool-host.js";
import { toolResultText } from "./tool-result-text.js";

/** What a tool call produced for the conversation. */
export interface ToolCallOutcome {
  output: string;
  isError: boolean;
  result?: CallToolResult;
}

/** What {@link executeToolCall} needs besides the call. */
export interface ExecuteToolCallContext {
  hub: ToolHost;
  /** Names the model may call (everything in the catalog it could see). */
  known: ReadonlySet<string>;
  /** Names to suggest when the model asks for one that does not exist. */
  suggestions: readonly string[];
  /** Tools the loop answers itself (e.g. `search_tools`, `load_skill`). */
  local?: ReadonlyMap<string, (input: Record<string, unknown>) => ToolCallOutcome | Promise<ToolCallOutcome>>;
  profile?: string;
  signal?: AbortSignal;
}

/**
 * Executes one call. Never rejects except with an {@link AbortedError} when the signal aborted.
 */
export async function executeToolCall(
  call: ParsedToolCall,
  ctx: ExecuteToolCallContext,
): Promise<ToolCallOutcome> {
  const local = ctx.local?.get(call.name);
  if (!local && !ctx.known.has(call.name)) {
    const valid = ctx.suggestions.slice(0, 30).join(", ");
    const more = ctx.suggestions.length > 30 ? `, and ${ctx.suggestions.length - 30} more` : "";
    const what =
      call.name === "" ? "The tool call has no tool name." : `There is no tool named "${call.name}".`;
    return { isError: true, output: `Error: ${what} Valid tool names: ${valid}${more}.` };
  }
  if (call.argumentsError !== undefined || call.input === undefined) {
    return {
      isError: true,
      output: `Error: ${call.argumentsError ?? "the arguments are missing"}. Call "${call.name}" again with a JSON object that matches its schema.`,
    };
  }
  if (local) return await local(call.input);
  try {
    const options: { signal?: AbortSignal; profile?: string } = {};
    if (ctx.signal) options.signal = ctx.signal;
    if (ctx.profile !== undefined) options.profile = ctx.profile;
    const result = await ctx.hub.callTool(call.name, call.input, options);
    const output = toolResultText(result);
    return { output: result.isError ? `Error: ${output}` : output, isError: result.isError === true, result };
  } catch (error) {
    if (ctx.signal?.aborted) {
      throw error instanceof AbortedError
        ? error
        : new AbortedError("the tool call was aborted", { tool: call.name }, { cause: error });
    }
    const message = error instanceof Error ? error.message : String(error);
    return { isError: true, output: `Error: the tool "${call.name}" could not be called: ${message}` };
  }
}
