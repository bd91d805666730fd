import { SSEClientTransport } from "@modelcontextprotocol/client";
import { serveHttp } from "../support/gateway.js";
import { frontContract } from "./front-contract.case.js";

// `mcplex serve --http` reached over its 2024-11-05 HTTP+SSE transport (/sse): the same front
// contract as stdio, Streamable HTTP and WebSocket.

frontContract("mcplex serve over HTTP+SSE", {
  async start(config) {
    const served = await serveHttp(["--config", config]);
    return {
      transport: () => new SSEClientTransport(new URL(`${served.origin}/sse`)),
      stop: () => served.stop(),
    };
  },
});
