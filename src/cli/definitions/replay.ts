import { defineCommand } from "../command-definition.js";
import { CONFIG_FLAG, JSON_FLAG } from "./common-flags.js";

/** `mcplex replay verify`. */
export const replayVerifyDefinition = defineCommand({
  name: "replay verify",
  summary: "send a recording's requests to the live server and report the answers that changed",
  usage: "mcplex replay verify FILE --server NAME [--config F] [--json]",
  details: "Exit 0 when no answer changed, 1 when one did.",
  flags: {
    ...CONFIG_FLAG,
    server: {
      type: "string",
      short: "s",
      value: "NAME",
      description: "the server of the config to ask (required)",
    },
    ...JSON_FLAG,
  },
  examples: [
    {
      command: "mcplex replay verify recordings/github.jsonl --server github",
      about: "check that github still answers as recorded",
    },
  ],
});

/** `mcplex replay`: one subcommand so far. */
export const replayDefinition = defineCommand({
  name: "replay",
  summary: "check recordings (serve --record) against the live servers",
  usage: "mcplex replay verify FILE --server NAME [--config F] [--json]",
  flags: {},
  examples: replayVerifyDefinition.examples,
  subcommands: [replayVerifyDefinition],
});
