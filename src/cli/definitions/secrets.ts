import { defineCommand } from "../command-definition.js";

/** `mcplex secrets set`. */
export const secretsSetDefinition = defineCommand({
  name: "secrets set",
  summary: "store a secret; without VALUE it is read from stdin, and stays out of shell history",
  usage: "mcplex secrets set NAME [VALUE]",
  flags: {},
  examples: [
    { command: "mcplex secrets set GITHUB_TOKEN < token.txt", about: "store a secret read from stdin" },
  ],
});

/** `mcplex secrets list`. */
export const secretsListDefinition = defineCommand({
  name: "secrets list",
  summary: "the names of the stored secrets (never their values)",
  usage: "mcplex secrets list",
  flags: {},
  examples: [{ command: "mcplex secrets list", about: "one name a line" }],
});

/** `mcplex secrets rm`. */
export const secretsRmDefinition = defineCommand({
  name: "secrets rm",
  aliases: ["remove"],
  summary: "forget a secret",
  usage: "mcplex secrets rm NAME",
  flags: {},
  examples: [{ command: "mcplex secrets rm GITHUB_TOKEN", about: "forget GITHUB_TOKEN" }],
});

/** `mcplex secrets`. */
export const secretsDefinition = defineCommand({
  name: "secrets",
  summary: "manage the encrypted secret store",
  usage: "mcplex secrets set NAME [VALUE] | list | rm NAME",
  details: `A config refers to a stored secret as \${secret:NAME}.`,
  flags: {},
  examples: [...secretsSetDefinition.examples, ...secretsListDefinition.examples],
  subcommands: [secretsSetDefinition, secretsListDefinition, secretsRmDefinition],
});
