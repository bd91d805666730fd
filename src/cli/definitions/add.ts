import { defineCommand } from "../command-definition.js";
import { REGISTRY_FLAG } from "./search.js";

/** `mcplex add`. */
export const addDefinition = defineCommand({
  name: "add",
  summary: "add a server from the MCP Registry to the config",
  usage: "mcplex add NAME [--name KEY] [--env NAME=VALUE ...] [--config F] [--registry URL]",
  details:
    "Its version is pinned and the inputs it declares are asked for; secret ones go to the secret store.",
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
  ],
});
