/**
 * The transport contract over WebSocket (subprotocol `mcp`, one message per text frame): the
 * fixture server in process behind `ws`, as a dual-era peer (2026-07-28) and as a 2025-only one.
 */
import { startWebSocketFixture } from "../../fixtures/servers/websocket-fixture-server.js";
import { FIXTURE_CALLS, SERVER_DEFAULTS } from "./fixture-contract.js";
import type { PeerSession } from "./transport-contract.case.js";
import { transportContract } from "./transport-contract.case.js";

async function websocketSession(name: string, era: "dual" | "legacy"): Promise<PeerSession> {
  const fixture = await startWebSocketFixture({ era });
  return {
    server: { ...SERVER_DEFAULTS, name, transport: "websocket", url: fixture.url, headers: {} },
    cancelled: (tag) => fixture.log.waitFor(`cancelled ${tag}`),
    // The server saw the socket close.
    watchRelease: async () => () => fixture.idle(),
    stop: () => fixture.close(),
  };
}

transportContract({
  label: "websocket: fixture server, dual-era",
  protocolVersion: "2026-07-28",
  transport: "websocket",
  ...FIXTURE_CALLS,
  start: () => websocketSession("fixture", "dual"),
});

transportContract({
  label: "websocket: fixture server, 2025 only",
  protocolVersion: "2025-11-25",
  transport: "websocket",
  ...FIXTURE_CALLS,
  start: () => websocketSession("legacy", "legacy"),
});
