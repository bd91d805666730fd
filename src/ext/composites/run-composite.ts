import type { CallToolResult } from "@modelcontextprotocol/client";
import type { CatalogTool } from "../../catalog/types.js";
import { codeTools } from "../../catalog-modes/run-code-tool.js";
import { type CodeLimits, CodeModeError, runCode } from "../../code-mode/index.js";
import { toolOutcome } from "../../code-mode/tool-value.js";
import { COMPOSITE_SERVER } from "../../config/read-composites.js";
import type { CompositeToolConfig } from "../../config/types.js";
import { McplexError } from "../../errors.js";

// Loaded with the first composite call: the sandbox's code is not on the way of a start.

/** What {@link runComposite} is given by whoever runs the call (the gateway, or the hub for the library). */
export interface CompositeRun {
  /** The composite's definition. */
  composite: CompositeToolConfig;
  /** Its name, for errors. */
  name: string;
  /** The call's arguments, the script's `args`. */
  args: Record<string, unknown>;
  /** The caller's tools (its profile's), composites left out: the script's `tools`. */
  tools: readonly CatalogTool[];
  /** An inner call, made as the caller's own (through the whole path the call came by). */
  callTool(exposed: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult>;
  signal: AbortSignal;
  /** Whose run it is, for the sandbox's fair share (see `RunCodeOptions.client`). */
  caller?: string;
  limits?: Partial<CodeLimits>;
}

/**
 * Runs a composite tool's call: its script in code mode's sandbox with `args` and the caller's
 * tools (no composite among them: one cannot call another, so no script recurses). Its value is
 * the result's text (and its `structuredContent` when the composite declares an `outputSchema`).
 * A failure is an `isError` result naming the composite, and the inner tool whose failure the
 * script did not catch. A cancelled call rejects.
 */
export async function runComposite(run: CompositeRun): Promise<CallToolResult> {
  const tools = run.tools.filter((t) => t.server !== COMPOSITE_SERVER && t.appOnly !== true);
  let failed: { tool: string; text: string } | undefined;
  const callTool = async (exposed: string, args: Record<string, unknown>, signal: AbortSignal) => {
    try {
      const result = await run.callTool(exposed, args, signal);
      // The error's text as the script is given it.
      const outcome = toolOutcome(result);
      if (!outcome.ok) failed = { tool: exposed, text: outcome.message };
      return result;
    } catch (error) {
      failed = { tool: exposed, text: error instanceof Error ? error.message : String(error) };
      throw error;
    }
  };
  // On the script's first line: its own lines keep their numbers in errors.
  // Parsed in the sandbox, not written as a literal: a key "__proto__" stays a key, as it came.
  const code = `const args = JSON.parse(${JSON.stringify(JSON.stringify(run.args))}); ${run.composite.script}`;
  try {
    const result = await runCode({
      code,
      tools: codeTools(tools),
      callTool,
      signal: run.signal,
      ...(run.limits === undefined ? {} : { limits: run.limits }),
      ...(run.caller === undefined ? {} : { client: run.caller }),
    });
    const out: CallToolResult = {
      content: [{ type: "text", text: valueText(result.value, result.output) }],
    };
    if (run.composite.outputSchema !== undefined && isObject(result.value))
      out.structuredContent = result.value;
    return out;
  } catch (error) {
    if (error instanceof CodeModeError && error.code === "REQUEST_ABORTED") throw error;
    if (!(error instanceof McplexError)) throw error;
    // Named when the script let that failure through (its message holds the tool's text).
    const said = failed?.text.split("\n")[0]?.slice(0, 80) ?? "";
    const inner =
      failed !== undefined && said !== "" && error.message.includes(said)
        ? ` (its call of ${failed.tool} failed: ${failed.text.split("\n")[0]})`
        : "";
    return {
      isError: true,
      content: [
        {
          type: "text",
          text: `composite tool "${run.name}" failed${inner}: ${error.code}: ${error.message.split("\n")[0]}`,
        },
      ],
    };
  }
}

/** The result's text: the value as JSON (a string as itself), else what the script printed. */
function valueText(value: unknown, output: string): string {
  if (typeof value === "string") return value;
  if (value !== undefined) return JSON.stringify(value);
  return output === "" ? "(no output)" : output;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
