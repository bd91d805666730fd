import type { CallToolResult } from "@modelcontextprotocol/client";
import type { CatalogTool } from "../catalog/types.js";
import {
  type CodeLimits,
  CodeModeError,
  type CodeTool,
  runCode,
  toolDeclarations,
} from "../code-mode/index.js";
import { McplexError } from "../errors.js";
import type { CodeRunner } from "./catalog-view.js";

/** The caller's tools as the sandbox binds them: `tools.<server>.<original name, or its override's>`. */
export function codeTools(tools: readonly CatalogTool[]): CodeTool[] {
  return tools.map((tool) => {
    const code: CodeTool = {
      server: tool.server,
      name: tool.localName ?? tool.originalName,
      exposed: tool.name,
    };
    if (tool.description !== undefined) code.description = tool.description;
    code.inputSchema = tool.inputSchema as Record<string, unknown>;
    if (tool.outputSchema !== undefined) code.outputSchema = tool.outputSchema as Record<string, unknown>;
    return code;
  });
}

/**
 * `run_code`: the script run in the sandbox over the caller's tools. What the script printed and
 * returned is the result's text; a script that fails (syntax, an uncaught throw, a limit) is an
 * `isError` result that says what happened, where, and what it had printed, for the model to
 * mend its script; a run refused because the sandbox is busy (CODE_BUSY) is one too, saying
 * when to retry, with `{ code, retryAt }` in `_meta["mcplex/error"]` for programs. A cancelled
 * run rejects: its client is gone.
 */
export function runCodeTool(limits: Partial<CodeLimits> = {}): CodeRunner {
  return async ({ code, tools, callTool, signal, caller }) => {
    try {
      const result = await runCode({
        code,
        tools: codeTools(tools),
        callTool,
        signal,
        limits,
        ...(caller === undefined ? {} : { client: caller }),
      });
      return { content: [{ type: "text", text: result.output === "" ? "(no output)" : result.output }] };
    } catch (error) {
      if (error instanceof CodeModeError && error.code !== "REQUEST_ABORTED") return failed(error);
      if (error instanceof McplexError && error.code === "INVALID_ARGUMENT") return failed(error);
      throw error;
    }
  };
}

/** The declarations `describe_tools` gives in code mode. */
export function declarationsOf(tools: readonly CatalogTool[]): string {
  return toolDeclarations(codeTools(tools));
}

function failed(error: McplexError): CallToolResult {
  const lines = [`${error.code}: ${error.message}`];
  if (error.hint !== undefined) lines.push(`hint: ${error.hint}`);
  if (error instanceof CodeModeError && error.logs.length > 0)
    lines.push("output before the failure:", ...error.logs);
  const result: CallToolResult = { isError: true, content: [{ type: "text", text: lines.join("\n") }] };
  if (error.code === "CODE_BUSY")
    result._meta = { [ERROR_META_KEY]: { code: error.code, retryAt: error.retryAt } };
  return result;
}

/** The `_meta` key of a tool error's `code` (as the workspace's tool errors carry theirs). */
const ERROR_META_KEY = "mcplex/error";
