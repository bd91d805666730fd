import type { Tool } from "@modelcontextprotocol/client";
import { SEARCH_TOOLS_NAME, searchToolsTool } from "../catalog/search-tools-tool.js";
import type { CatalogMode } from "./catalog-mode.js";

/** Names of the meta-tools a client sees in `search` and `code` mode. */
export const META_TOOL = {
  search: SEARCH_TOOLS_NAME,
  describe: "describe_tools",
  call: "call_tool",
  runCode: "run_code",
} as const;

const describeTools = (code: boolean): Tool => ({
  name: META_TOOL.describe,
  description: code
    ? "TypeScript declarations of tools (by name, from search_tools), as they are called in run_code."
    : "Full input and output schemas of tools, by the names search_tools returned.",
  inputSchema: {
    type: "object",
    properties: { names: { type: "array", items: { type: "string" }, minItems: 1 } },
    required: ["names"],
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
});

const callTool: Tool = {
  name: META_TOOL.call,
  description: "Call a tool found with search_tools, by name, with its arguments. Returns the tool's result.",
  inputSchema: {
    type: "object",
    properties: {
      name: { type: "string", description: "The tool's name as search_tools gave it" },
      arguments: { type: "object", description: "The tool's arguments, as describe_tools describes them" },
    },
    required: ["name"],
  },
};

const runCode: Tool = {
  name: META_TOOL.runCode,
  description:
    "Run a JavaScript (or TypeScript) script in a sandbox where each tool is an async function: " +
    "`const r = await tools.SERVER.TOOL({...args})`. Use describe_tools for the declarations. " +
    "console.log output and the script's return value come back. Use it to chain tools, loop " +
    "over items or filter results without sending them through the conversation.",
  inputSchema: {
    type: "object",
    properties: { code: { type: "string", description: "The script; `return` a value to get it back" } },
    required: ["code"],
  },
};

/** The meta-tools of `mode`, in the order a client lists them (none in `all` mode). */
export function metaTools(mode: CatalogMode): readonly Tool[] {
  switch (mode) {
    case "all":
      return [];
    case "search":
      return [searchToolsTool, describeTools(false), callTool];
    case "code":
      return [searchToolsTool, describeTools(true), runCode];
  }
}

/** Whether `name` is one of `mode`'s meta-tools. */
export function isMetaTool(mode: CatalogMode, name: string): boolean {
  return metaTools(mode).some((tool) => tool.name === name);
}
