/**
 * Search-then-call: when the catalog holds more tools than the provider accepts, the
 * model first sees one `search_tools` tool, and the tools it finds join the next request.
 */
import { ToolIndex } from "../catalog/tool-index.js";
import type { AgentTool } from "./tool-host.js";

/** The name of the search tool the model sees in search mode. */
export const SEARCH_TOOLS_NAME = "search_tools";

/** The search tool's definition. */
export const searchToolsTool: AgentTool = {
  name: SEARCH_TOOLS_NAME,
  description:
    "Search the available tools by keywords. The tools found become callable in your next step. " +
    "Call this first, then call the tools you found.",
  inputSchema: {
    type: "object",
    properties: {
      query: { type: "string", description: "Keywords describing what you want to do" },
      limit: { type: "integer", description: "Maximum number of tools to return (default 10)" },
    },
    required: ["query"],
  },
};

/**
 * A search over `tools` with the catalog's {@link ToolIndex}: the tools that best match a
 * keyword query, best first; the first `limit` tools when the query has no searchable word.
 *
 * @example createToolSearch(tools)("add numbers", 5).map((t) => t.name)
 */
export function createToolSearch(
  tools: readonly AgentTool[],
): (query: string, limit?: number) => AgentTool[] {
  const index = new ToolIndex(tools);
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  return (query, limit = 10) => index.search(query, { limit }).map((hit) => byName.get(hit.name)!);
}
