import { defineCommand } from "../command-definition.js";
import { CONFIG_FLAG, JSON_FLAG } from "./common-flags.js";

/** `mcplex list`. */
export const listDefinition = defineCommand({
  name: "list",
  summary: "servers, their state and their tools (lazy servers are started too)",
  usage: "mcplex list [--config F] [--profile P] [--json]",
  flags: {
    ...CONFIG_FLAG,
    profile: { type: "string", short: "p", value: "P", description: "only the tools of this profile" },
    ...JSON_FLAG,
  },
  examples: [
    { command: "mcplex list", about: "every server of ./mcplex.yaml and its tools" },
    { command: "mcplex list --json --profile review", about: "the tools of one profile, as JSON" },
  ],
});
