import { defineCommand } from "../command-definition.js";
import { CONFIG_FLAG, JSON_FLAG } from "./common-flags.js";

/** The flags of both subcommands: where the connections are, and how to print them. */
const WHERE_FLAGS = {
  user: {
    type: "string",
    short: "u",
    value: "SUB",
    description: "the user: their subject (sub) or the key the vault keeps them under",
  },
  url: {
    type: "string",
    value: "URL",
    description: "act on a running gateway at URL instead of the vault on this machine",
  },
  token: { type: "string", value: "T", description: "with --url: an operator's token of that gateway" },
  ...CONFIG_FLAG,
  ...JSON_FLAG,
} as const;

/** `mcplex connections list`. */
export const connectionsListDefinition = defineCommand({
  name: "connections list",
  summary: "the users holding per-user connections, and their servers",
  usage: "mcplex connections list [--user SUB] [--url URL --token T] [--config F] [--json]",
  flags: WHERE_FLAGS,
  examples: [
    { command: "mcplex connections list", about: "every user's connections, from the vault on this machine" },
  ],
});

/** `mcplex connections revoke`. */
export const connectionsRevokeDefinition = defineCommand({
  name: "connections revoke",
  summary: "revoke one server's connection of a user, or all of theirs",
  usage:
    "mcplex connections revoke --user SUB (--server NAME | --all) [--url URL --token T] [--config F] [--json]",
  details:
    "On a running gateway (--url) it also revokes the tokens at the server and closes live connections.",
  flags: {
    ...WHERE_FLAGS,
    server: { type: "string", short: "s", value: "NAME", description: "the one server to revoke" },
    all: { type: "boolean", description: "revoke every server of the user" },
  },
  examples: [
    {
      command:
        "mcplex connections revoke --user alice --all --url https://mcp.example.com --token $OPERATOR_TOKEN",
      about: "revoke all of alice's connections on a running gateway",
    },
  ],
});

/** `mcplex connections`. */
export const connectionsDefinition = defineCommand({
  name: "connections",
  summary: "users' own connections to per-user servers: list them, revoke them",
  usage: "mcplex connections list [--user SUB] [--json] | revoke --user SUB (--server NAME | --all)",
  flags: {},
  examples: [...connectionsListDefinition.examples, ...connectionsRevokeDefinition.examples],
  subcommands: [connectionsListDefinition, connectionsRevokeDefinition],
});
