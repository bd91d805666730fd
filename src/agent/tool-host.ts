/**
 * The seam between the agent loop and whatever provides tools (the hub, or any adapter).
 */
import type { CallToolResult } from "@modelcontextprotocol/client";

/** A tool as the agent sees it: an LLM-safe name, a description and a JSON Schema for its input. */
export interface AgentTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/**
 * Where the agent loop lists and calls tools. `Hub` implements it as it is; so can any adapter.
 *
 * @example
 * const host: ToolHost = { tools: () => tools, callTool: (name, args) => client.callTool({ name, arguments: args }) };
 */
export interface ToolHost {
  /** Tools visible to the agent (LLM-safe names matching ^[A-Za-z0-9_-]{1,64}$). */
  tools(profile?: string): readonly AgentTool[] | Promise<readonly AgentTool[]>;
  /** Calls a tool by exposed name. Resolves with the MCP CallToolResult (isError for tool errors); rejects for unknown tools / unavailable servers. */
  callTool(
    name: string,
    args: Record<string, unknown>,
    options?: { signal?: AbortSignal; profile?: string },
  ): Promise<CallToolResult>;
}
