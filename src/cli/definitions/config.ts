import { defineCommand } from "../command-definition.js";
import { CONFIG_FLAG, JSON_FLAG } from "./common-flags.js";

/** `mcplex config check`. */
export const configCheckDefinition = defineCommand({
  name: "config check",
  summary: "validate a config without connecting",
  usage: "mcplex config check [--config F] [--json]",
  flags: { ...CONFIG_FLAG, ...JSON_FLAG },
  examples: [
    { command: "mcplex config check", about: "check ./mcplex.yaml" },
    { command: "mcplex config check --config ~/.cursor/mcp.json", about: "check a Cursor config" },
  ],
});

/** `mcplex config convert`. */
export const configConvertDefinition = defineCommand({
  name: "config convert",
  summary: "print any supported config file as an mcplex.yaml",
  usage: "mcplex config convert FILE",
  flags: {},
  examples: [
    {
      command: "mcplex config convert ~/.cursor/mcp.json > mcplex.yaml",
      about: "turn a Cursor config into an mcplex.yaml",
    },
  ],
});

/** `mcplex config`. */
export const configDefinition = defineCommand({
  name: "config",
  summary: "check a config, or convert another client's config to an mcplex.yaml",
  usage: "mcplex config check [--config F] [--json] | convert FILE",
  details:
    'Besides mcplex.yaml, Claude Desktop / Cursor "mcpServers" and VS Code "servers" files, and ' +
    'applications\' "mcp: client: servers:" lists, "mcp_servers:" maps and bare maps of servers by id ' +
    "are read as they are.",
  flags: {},
  examples: [...configCheckDefinition.examples.slice(0, 1), ...configConvertDefinition.examples],
  subcommands: [configCheckDefinition, configConvertDefinition],
});
