import { defineCommand } from "../command-definition.js";
import { CONFIG_FLAG, JSON_FLAG } from "./common-flags.js";

/** `mcplex trust`. */
export const trustDefinition = defineCommand({
  name: "trust",
  summary: "approve the tool changes of a pinned server (pin:) after reviewing them",
  usage: "mcplex trust SERVER [TOOL] [--config F] [--json]",
  details:
    "Starts the server, shows what changed since its tools were approved, and approves all of its " +
    "changes (or one tool's) in the lock file.",
  flags: { ...CONFIG_FLAG, ...JSON_FLAG },
  examples: [
    { command: "mcplex trust github", about: "approve every change of the github server" },
    { command: "mcplex trust github create_issue", about: "approve the change of one tool" },
  ],
});
