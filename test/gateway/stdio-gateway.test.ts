import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
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
        }),
      stop: async () => {},
    };
  },
});
