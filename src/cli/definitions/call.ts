import { defineCommand } from "../command-definition.js";
import { CONFIG_FLAG, JSON_FLAG } from "./common-flags.js";

/** `mcplex call`. */
export const callDefinition = defineCommand({
  name: "call",
  summary: "call one tool by its exposed name and print its result",
  usage: "mcplex call TOOL [JSON_ARGS] [--config F] [--profile P] [--timeout MS] [--json]",
  flags: {
    ...CONFIG_FLAG,
    profile: { type: "string", short: "p", value: "P", description: "call the tool as this profile sees it" },
    ...JSON_FLAG,
    timeout: { type: "string", value: "MS", description: "give up on the call after this many milliseconds" },
  },
  examples: [
    { command: `mcplex call everything__echo '{"message":"hi"}'`, about: "call a tool with arguments" },
    {
      command: 'mcplex call fs__list_directory \'{"path":"."}\' --json',
      about: "print the raw result as JSON",
    },
  ],
});
