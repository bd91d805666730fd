import { defineCommand } from "../command-definition.js";
import { JSON_FLAG } from "./common-flags.js";

/** The registry flag `search` and `add` share. */
export const REGISTRY_FLAG = {
  registry: {
    type: "string",
    value: "URL",
    description: "the MCP Registry to ask",
    defaultText: "https://registry.modelcontextprotocol.io",
  },
} as const;

/** `mcplex search`. */
export const searchDefinition = defineCommand({
  name: "search",
  summary: "servers of the MCP Registry whose name matches",
  usage: "mcplex search WORDS [--registry URL] [--limit N] [--json]",
  flags: {
    ...REGISTRY_FLAG,
    limit: { type: "string", value: "N", description: "the most servers to list", defaultText: "30" },
    ...JSON_FLAG,
  },
  examples: [{ command: "mcplex search github", about: "servers whose name has github in it" }],
});
