import { defineCommand } from "../command-definition.js";
import { REGISTRY_FLAG } from "./search.js";

/** `mcplex add`. */
export const addDefinition = defineCommand({
  name: "add",
  summary: "add a server from the MCP Registry, a Server Card or a domain's catalog to the config",
  usage: "mcplex add NAME|CARD-URL|DOMAIN [--name KEY] [--env NAME=VALUE ...] [--config F] [--registry URL]",
  details:
    "Its version is pinned and the inputs it declares are asked for; secret ones go to the secret store. " +
    "A URL is read as a Server Card (or an AI Catalog); a domain (a dot, no slash) as the catalog at " +
    "https://DOMAIN/.well-known/ai-catalog.json, whose cards on that origin are all added (MCP draft SEP-2127).",
  flags: {
    ...REGISTRY_FLAG,
    config: {
      type: "string",
      short: "c",
      value: "F",
      description: "the config file to add it to",
      defaultText: "mcplex.yaml|yml|json in this directory, else a new mcplex.yaml",
    },
    name: {
      type: "string",
      value: "KEY",
      description: "the server's name in the config",
      defaultText: "the last part of its registry name",
    },
    env: {
      type: "string",
      multiple: true,
      value: "NAME=VALUE",
      description: "a value of an input it declares, instead of asking",
    },
  },
  examples: [
    {
      command: "mcplex add io.github.modelcontextprotocol/server-filesystem",
      about: "add the filesystem server, asking for its inputs",
    },
    {
      command: "mcplex add example.com",
      about: "add the servers example.com lists in its AI Catalog",
    },
    {
      command: "mcplex add https://mcp.example.com/mcp/server-card",
      about: "add the server of one Server Card",
    },
  ],
});
