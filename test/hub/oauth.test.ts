import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Hub } from "../../src/hub/hub.js";
import { type Authorize, memoryOAuthStore } from "../../src/upstream/oauth.js";
import { type OAuthFixture, startOAuthFixture } from "../fixtures/servers/oauth-fixture.js";
import { approveAtOnce } from "../support/approve.js";
import { configOf, remote } from "../support/config.js";

let server: OAuthFixture;
beforeAll(async () => {
  server = await startOAuthFixture();
});
afterAll(() => server.close());

function guardedHub(authorize?: Authorize): Hub {
  const config = configOf([
    remote("guarded", server.url, "streamable-http", {
      oauth: { grant: "authorization_code", redirectUrl: "http://127.0.0.1:1/callback", clientName: "test" },
    }),
  ]);
  return new Hub({ config, oauth: { store: memoryOAuthStore(), ...(authorize ? { authorize } : {}) } });
}

describe("a hub in front of an OAuth server", () => {
  it("refreshes once for many calls refused together, and every call succeeds", async () => {
    const hub = guardedHub(approveAtOnce);
    await hub.start();
    try {
      expect(hub.servers()[0]?.state).toBe("ready");
      expect(server.grants.authorization_code).toBe(1);
      server.expireAccessTokens();
      const refreshes = server.grants.refresh_token ?? 0;
      const calls = Array.from({ length: 24 }, (_, i) =>
        hub.callTool("guarded__echo", { message: `call ${i}` }),
      );
      const results = await Promise.all(calls);
      expect(results.map((r) => (r.content[0] as { text: string }).text)).toEqual(
        Array.from({ length: 24 }, (_, i) => `echo: call ${i}`),
      );
      // The refresh token rotates: refreshing per refused call would have failed all but one.
      expect(server.grants.refresh_token).toBe(refreshes + 1);
      expect(server.grants.authorization_code).toBe(1);
    } finally {
      await hub.close();
    }
  });

  it("without a way to ask the user, reports the server as needing authorization, with the command", async () => {
    const hub = guardedHub();
    await hub.start();
    try {
      const [status] = hub.servers();
      expect(status?.state).not.toBe("ready");
      expect(status?.error).toBe("guarded: the server needs an OAuth authorization");
      expect(status?.hint).toContain('mcplex auth login guarded"');
    } finally {
      await hub.close();
    }
  });
});
