import type { CallToolResult } from "@modelcontextprotocol/server";
import { WorkspaceError } from "./workspace-error.js";

/** A successful tool result: `text` for the model, `structured` matching the tool's output schema. */
export function toolOk(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: structured };
}

/**
 * Run a tool body and turn any failure into an `isError` tool result with a precise message
 * (never a protocol error): refusals carry the path and rule, unexpected throws their message.
 */
export async function guarded(body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (error) {
    const text =
      error instanceof WorkspaceError
        ? error.message
        : `Unexpected error: ${error instanceof Error ? error.message : String(error)}`;
    return { content: [{ type: "text", text }], isError: true };
  }
}
