import type { CallToolResult } from "@modelcontextprotocol/server";
import { WorkspaceError } from "./workspace-error.js";

/** A successful tool result: `text` for the model, `structured` matching the tool's output schema. */
export function toolOk(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: structured };
}

/** The `_meta` key under which a workspace tool error carries its `code` and `reason`. */
export const ERROR_META_KEY = "mcplex/error";

/**
 * Run a tool body and turn any failure into an `isError` tool result with a precise message
 * (never a protocol error): refusals carry the path and rule, unexpected throws their message.
 * A refusal's `code` and `reason` go in `_meta` for programs: `structuredContent` must match
 * the tool's output schema, which describes a success.
 */
export async function guarded(body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof WorkspaceError) {
      return {
        content: [{ type: "text", text: error.message }],
        isError: true,
        _meta: { [ERROR_META_KEY]: { code: error.code, reason: error.reason } },
      };
    }
    const text = `Unexpected error: ${error instanceof Error ? error.message : String(error)}`;
    return { content: [{ type: "text", text }], isError: true };
  }
}
