import { defineCommand } from "../command-definition.js";
import { CONFIG_FLAG } from "./common-flags.js";

/** `mcplex auth login`. */
export const authLoginDefinition = defineCommand({
  name: "auth login",
  summary: "authorize mcplex with a server's OAuth server, in a browser",
  usage: "mcplex auth login NAME [--no-browser] [--config F]",
  details:
    "For a server configured with oauth: the tokens are kept in the secret store and refreshed from " +
    "then on by every command.",
  flags: {
    ...CONFIG_FLAG,
    "no-browser": { type: "boolean", description: "only print the URL to open, do not open a browser" },
  },
  examples: [{ command: "mcplex auth login linear", about: "sign in to the linear server" }],
});

/** `mcplex auth logout`. */
export const authLogoutDefinition = defineCommand({
  name: "auth logout",
  summary: "forget a server's OAuth tokens",
  usage: "mcplex auth logout NAME",
  flags: { ...CONFIG_FLAG },
  examples: [{ command: "mcplex auth logout linear", about: "forget the tokens of the linear server" }],
});

/** `mcplex auth rotate-dpop`. */
export const authRotateDpopDefinition = defineCommand({
  name: "auth rotate-dpop",
  summary: "replace a server's DPoP key pair, dropping the tokens bound to the old one",
  usage: "mcplex auth rotate-dpop NAME [--config F]",
  details:
    "For a server configured with oauth.dpop: the new key is sealed in the secret store; the next " +
    "connection (or auth login, for a person's grant) gets tokens bound to it. Restart a running serve.",
  flags: { ...CONFIG_FLAG },
  examples: [{ command: "mcplex auth rotate-dpop billing", about: "a new DPoP key for the billing server" }],
});

/** `mcplex auth`. */
export const authDefinition = defineCommand({
  name: "auth",
  summary: "sign mcplex in to (or out of) a server that uses OAuth",
  usage: "mcplex auth login NAME [--no-browser] | logout NAME | rotate-dpop NAME [--config F]",
  flags: {},
  examples: [
    ...authLoginDefinition.examples,
    ...authLogoutDefinition.examples,
    ...authRotateDpopDefinition.examples,
  ],
  subcommands: [authLoginDefinition, authLogoutDefinition, authRotateDpopDefinition],
});
