/**
 * Search-then-call: when the catalog holds more tools than the provider accepts, the
 * model first sees one `search_tools` tool, and the tools it finds join the next request.
 */
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
 * Ranks tools against a keyword query: a word in the name counts more than one in the description.
 *
 * @example searchTools(tools, "add numbers", 5).map((t) => t.name)
 */
export function searchTools(tools: readonly AgentTool[], query: string, limit = 10): AgentTool[] {
  const words = query
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 1);
  if (words.length === 0) return tools.slice(0, limit);
  const scored = tools.map((tool, order) => {
    const name = tool.name.toLowerCase();
    const description = (tool.description ?? "").toLowerCase();
    let score = 0;
    for (const word of words) {
      if (name.includes(word)) score += 3;
      if (description.includes(word)) score += 1;
    }
    return { tool, score, order };
  });
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, Math.max(1, limit))
    .map((s) => s.tool);
}
