import type { Tool } from "@modelcontextprotocol/client";

/** The name of the tool a model finds tools with (the gateway's search and code modes, the agent's search mode). */
export const SEARCH_TOOLS_NAME = "search_tools";
/** Most hits `search_tools` returns, whatever `limit` asks for. */
export const MAX_SEARCH_LIMIT = 50;
/** Hits `search_tools` returns without a `limit`. */
export const DEFAULT_SEARCH_LIMIT = 8;

/**
 * The one definition of `search_tools`, whoever offers it: the gateway's `search` and `code`
 * views and the agent loop's `toolMode: "search"`. What to do with the tools found differs
 * between them (describe and call them, or call them in the next step), so their answers say it.
 */
export const searchToolsTool: Tool = {
  name: SEARCH_TOOLS_NAME,
  description:
    "Find tools by what you want to do. Returns the best matching tool names with one-line " +
    "descriptions, and what to do next with them.",
  inputSchema: {
    type: "object",
    properties: {
      query: { type: "string", description: "What you want to do, in a few words" },
      server: { type: "string", description: "Only tools of this server" },
      limit: {
        type: "integer",
        minimum: 1,
        maximum: MAX_SEARCH_LIMIT,
        description: `Most tools to return (default ${DEFAULT_SEARCH_LIMIT})`,
      },
    },
    required: ["query"],
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
};

/** The arguments of a `search_tools` call, checked, with the default limit applied. */
export interface SearchToolsArguments {
  query: string;
  server?: string;
  /** From 1 to {@link MAX_SEARCH_LIMIT}. */
  limit: number;
}

/**
 * Reads a `search_tools` call's arguments: the arguments, or the error to answer the model with
 * (naming what is wrong and what is expected). A `limit` above the maximum is lowered to it.
 */
export function readSearchArguments(args: Record<string, unknown>): SearchToolsArguments | { error: string } {
  const { query, server } = args;
  if (typeof query !== "string" || query.trim() === "")
    return { error: "search_tools needs `query`: a few words saying what you want to do" };
  if (server !== undefined && typeof server !== "string")
    return { error: "search_tools: `server` must be a server name (a string)" };
  const limit = args.limit ?? DEFAULT_SEARCH_LIMIT;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1)
    return { error: `search_tools: \`limit\` must be a whole number from 1 to ${MAX_SEARCH_LIMIT}` };
  return { query, limit: Math.min(limit, MAX_SEARCH_LIMIT), ...(server === undefined ? {} : { server }) };
}
