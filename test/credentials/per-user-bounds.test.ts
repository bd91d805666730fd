/**
 * The bounds of per-user servers through the gateway, with users signed in at a real
 * authorization server: a user past `maxUsers` is refused with a message naming the bound, and
 * a user's process ends after `users.idleTimeout` without a call (waited for on the hub's
 * event, sent once the process has exited), which frees its place.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { userKey } from "../../src/credentials/user-ref.js";
import type { HubEvent } from "../../src/hub/hub.js";
import { alive, nextEvent } from "../support/wait.js";
import { type PerUserGateway, startPerUserGateway } from "./per-user-gateway.js";

let gw: PerUserGateway;
beforeAll(async () => {
  // The idle timeout leaves bob's one call, right after alice's, well inside it.
  gw = await startPerUserGateway(["alice", "bob"], "users:\n  idleTimeout: 3s\n", "    maxUsers: 1\n");
}, 60_000);
afterAll(() => gw?.close());

describe("a per-user server's bounds through the gateway", () => {
  it("refuses a user past maxUsers, and lets them in once the other's process has gone idle", async () => {
    const closed = nextEvent(
      gw.running.hub,
      (e): e is Extract<HubEvent, { type: "user-connection-closed" }> => e.type === "user-connection-closed",
      30_000,
    );
    const alice = await gw.whoami("alice");
    const refused = await gw.call(gw.tokens.bob!, "who__whoami");
    const text = JSON.stringify(refused.json);
    expect(text).toContain(
      "1 users already hold a connection of their own (credentials: per-user, maxUsers: 1)",
    );
    expect(text).toContain("raise servers.who.maxUsers");
    expect(await closed).toMatchObject({
      server: "who",
      user: userKey(gw.as.issuer, "alice"),
      reason: "idle",
    });
    expect(alive(alice.pid)).toBe(false);
    expect(await gw.whoami("bob")).toMatchObject({ user: "bob" });
  }, 60_000);
});
