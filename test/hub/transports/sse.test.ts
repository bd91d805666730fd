/**
 * The transport contract over the legacy HTTP+SSE transport (2024-11-05 wire, 2025 protocol):
 * server-everything's `sse` mode, configured as `sse`, and configured as `streamable-http` at a
 * URL that refuses POST (its `/sse` stream endpoint answers POST with 404), so that the hub
 * falls back to SSE as the spec describes.
 */
import type { ServerConfig } from "../../../src/config/types.js";
import { within } from "../../support/wait.js";
import { startCountingProxy } from "./counting-proxy.js";
import { EVERYTHING_CALLS, startEverythingHttp } from "./everything-peer.js";
import { SERVER_DEFAULTS } from "./fixture-contract.js";
import type { PeerSession } from "./transport-contract.case.js";
import { transportContract } from "./transport-contract.case.js";

async function everythingSse(name: string, transport: "sse" | "streamable-http"): Promise<PeerSession> {
  const everything = await startEverythingHttp("sse");
  const proxy = await startCountingProxy(everything.origin);
  const server: ServerConfig = {
    ...SERVER_DEFAULTS,
    name,
    transport,
    url: `${proxy.origin}/sse`,
    headers: {},
  };
  return {
    server,
    // The SSE stream (GET /sse) and every POST /message have ended: the session is over.
    watchRelease: async () => async () => {
      await within(proxy.idle(), 5000, "the SSE stream and every POST to end");
      // The server's own word that the session is over.
      await within(
        everything.outputMatches(/Client Disconnected/),
        5000,
        "server-everything to end the session",
      );
    },
    stop: async () => {
      await proxy.close();
      await everything.stop();
    },
  };
}

transportContract({
  label: "sse: server-everything, configured as sse",
  protocolVersion: "2025-11-25",
  transport: "sse",
  ...EVERYTHING_CALLS,
  start: () => everythingSse("everything", "sse"),
});

transportContract({
  label: "sse: server-everything, reached by falling back from streamable-http",
  protocolVersion: "2025-11-25",
  transport: "sse",
  ...EVERYTHING_CALLS,
  start: () => everythingSse("fallback", "streamable-http"),
});
