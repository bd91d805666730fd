/**
 * Search-then-call: when the catalog holds more tools than the provider accepts, the
 * model first sees one `search_tools` tool (the catalog's one definition of it), and the tools
 * it finds join the next request.
 */
import { DEFAULT_SEARCH_LIMIT, type SearchToolsArguments } from "../catalog/search-tools-tool.js";
import { ToolIndex } from "../catalog/tool-index.js";
import type { AgentTool } from "./tool-host.js";

/**
 * A search over `tools` with the catalog's {@link ToolIndex}: the tools that best match a
 * keyword query, best first; the first `limit` tools when the query has no searchable word.
 *
 * @example createToolSearch(tools)({ query: "add numbers", limit: 5 }).map((t) => t.name)
 */
export function createToolSearch(
  tools: readonly (AgentTool & { server?: string })[],
): (search: Omit<SearchToolsArguments, "limit"> & { limit?: number }) => AgentTool[] {
  const index = new ToolIndex(tools);
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  return ({ query, server, limit = DEFAULT_SEARCH_LIMIT }) =>
    index
      .search(query, { limit, ...(server === undefined ? {} : { server }) })
      .map((hit) => byName.get(hit.name)!);
}
