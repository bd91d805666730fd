import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { CLI } from "../support/cli.js";
import { frontContract } from "./front-contract.case.js";

frontContract("mcplex serve --stdio", {
  async start(config) {
    // A stdio gateway is spawned by its client: one process per connection.
    return {
      transport: () =>
        new StdioClientTransport({
          command: process.execPath,
          args: [CLI, "serve", "--stdio", "--config", config],
          stderr: "ignore",
          // The SDK passes only a safe part of the environment; the signal check must get through.
          env: { ...getDefaultEnvironment(), MCPLEX_CHECK_SIGNALS: process.env.MCPLEX_CHECK_SIGNALS ?? "" },
        }),
      stop: async () => {},
    };
  },
});
