import { WebSocketClientTransport } from "../../src/upstream/websocket-transport.js";
import { serveHttp } from "../support/gateway.js";
import { frontContract } from "./front-contract.case.js";

frontContract("mcplex serve (WebSocket /ws)", {
  async start(config) {
    const gw = await serveHttp(["--config", config]);
    return { transport: () => new WebSocketClientTransport({ url: gw.wsUrl }), stop: () => gw.stop() };
  },
});
