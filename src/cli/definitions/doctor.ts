import { defineCommand } from "../command-definition.js";
import { CONFIG_FLAG, JSON_FLAG } from "./common-flags.js";

/** `mcplex doctor`. */
export const doctorDefinition = defineCommand({
  name: "doctor",
  summary: "start every server and check what mcplex needs, saying what to fix",
  usage: "mcplex doctor [--config F] [--host H] [--port P] [--base-url U] [--model M] [--json]",
  details:
    "Checks Node, the config, every server (started for real), the catalog, the port serve would " +
    "take and the LLM endpoint chat would use. Exit 0 when nothing failed, 2 when the config cannot " +
    "be used, 3 when something is unavailable.",
  flags: {
    ...CONFIG_FLAG,
    host: {
      type: "string",
      value: "H",
      description: "the address serve would listen on",
      defaultText: "127.0.0.1",
    },
    port: { type: "string", value: "P", description: "the port serve would take", defaultText: "8420" },
    "base-url": { type: "string", value: "U", description: "the LLM endpoint chat would use" },
    model: { type: "string", short: "m", value: "M", description: "the model chat would ask" },
    ...JSON_FLAG,
  },
  examples: [
    { command: "mcplex doctor", about: "check ./mcplex.yaml and this machine" },
    { command: "mcplex doctor --port 9000 --json", about: "check port 9000 too, as JSON" },
  ],
});
