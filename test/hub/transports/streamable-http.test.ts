/**
 * The transport contract over Streamable HTTP: the fixture server behind the SDK v2
 * `createMcpHandler` (2026-07-28, in process on port 0), and server-everything's
 * `streamableHttp` mode (a sessionful 2025 server, in a child process).
 */
import type { ServerConfig } from "../../../src/config/types.js";
import { startHttpFixture } from "../../fixtures/servers/http-fixture-server.js";
import { within } from "../../support/wait.js";
import { startCountingProxy } from "./counting-proxy.js";
import { EVERYTHING_CALLS, startEverythingHttp } from "./everything-peer.js";
import { FIXTURE_CALLS, SERVER_DEFAULTS } from "./fixture-contract.js";
import { transportContract } from "./transport-contract.case.js";

function httpServer(
  name: string,
  url: string,
  transport: "streamable-http" | "sse" = "streamable-http",
): ServerConfig {
  return { ...SERVER_DEFAULTS, name, transport, url, headers: {} };
}

transportContract({
  label: "streamable-http: fixture server on createMcpHandler (2026)",
  protocolVersion: "2026-07-28",
  transport: "streamable-http",
  ...FIXTURE_CALLS,
  start: async () => {
    const fixture = await startHttpFixture();
    return {
      server: httpServer("fixture", fixture.url),
      cancelled: (tag) => fixture.log.waitFor(`cancelled ${tag}`),
      // Every HTTP exchange the hub opened has ended (no stream left open on the server).
      watchRelease: async () => () => fixture.idle(),
      stop: () => fixture.close(),
    };
  },
});

transportContract({
  label: "streamable-http: server-everything (2025, sessions)",
  protocolVersion: "2025-11-25",
  transport: "streamable-http",
  ...EVERYTHING_CALLS,
  start: async () => {
    const everything = await startEverythingHttp("streamableHttp");
    // Counting exchanges between hub and server shows whether close() left a stream open.
    const proxy = await startCountingProxy(everything.origin);
    return {
      server: httpServer("everything", `${proxy.origin}/mcp`),
      watchRelease: async () => async () => {
        await within(proxy.idle(), 5000, "every HTTP exchange with server-everything to end");
        // A 2025 session lives on the server until the client ends it with DELETE (the
        // server's transport then closes and says so); dropping the connections is not enough.
        await within(
          everything.outputMatches(/Transport closed for session/),
          5000,
          "server-everything to close the session (a 2025 client ends it with DELETE)",
        );
      },
      stop: async () => {
        await proxy.close();
        await everything.stop();
      },
    };
  },
});
