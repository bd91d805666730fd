/**
 * Per-user remote servers in the hub: each user's connection sends that user's credential,
 * either a header filled from their `${user:NAME}` value (the vault's plan) or the bearer a
 * `UserCredentialSource` gives (what token exchange plugs into). A real Streamable HTTP server
 * (the SDK fixture, in process) records the credential of every request and refuses a request
 * without one.
 */
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import type { UserCredentialSource, UserRef } from "../../src/credentials/user-credentials.js";
import { userKey } from "../../src/credentials/user-ref.js";
import { Hub, type HubOptions } from "../../src/hub/hub.js";
import { startHttpFixture } from "../fixtures/servers/http-fixture-server.js";
import { resultText } from "../support/gateway.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const user = (sub: string): UserRef => ({ key: userKey("https://idp.test", sub), subject: sub });
const ALICE = user("alice");
const BOB = user("bob");

/** The fixture behind a check: every request must carry `header`; its values are recorded. */
async function guarded(header: string): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  const fixture = await startHttpFixture({
    intercept: (req, res) => {
      const value = req.headers[header];
      if (typeof value !== "string") {
        res.writeHead(401).end();
        return true;
      }
      seen.push(value);
      return false;
    },
  });
  cleanups.push(() => fixture.close());
  return { url: fixture.url, seen };
}

function hubOf(server: string, options: Partial<HubOptions> = {}): Hub {
  const config = parseConfig(`servers:\n  fx:\n${server}`, { source: "mcplex.yaml", env: {} });
  const hub = new Hub({ config, ...options });
  cleanups.push(() => hub.close());
  return hub;
}

const echo = async (hub: Hub, who: UserRef, message: string) =>
  resultText(await hub.callTool("fx__echo", { message }, { user: who }));

describe("a per-user remote server", () => {
  it("sends each user's own header value, filled from their ${user:NAME}", async () => {
    const server = await guarded("x-api-key");
    const hub = hubOf(
      `    url: ${server.url}\n    credentials: per-user\n    headers: { X-Api-Key: "\${user:API_KEY}" }\n`,
    );
    await hub.credentialVault.put(ALICE.key, "fx", { values: { API_KEY: "alice-key-1234" }, connectedAt: 0 });
    await hub.credentialVault.put(BOB.key, "fx", { values: { API_KEY: "bob-key-5678" }, connectedAt: 0 });
    await echo(hub, ALICE, "a");
    const aliceSeen = server.seen.splice(0);
    expect(new Set(aliceSeen)).toEqual(new Set(["alice-key-1234"]));
    expect(await echo(hub, BOB, "b")).toContain("b");
    expect(new Set(server.seen)).toEqual(new Set(["bob-key-5678"]));
  });

  it("sends the bearer its credential source gives each user, asked before each request", async () => {
    const server = await guarded("authorization");
    const asked: string[] = [];
    const source: UserCredentialSource = {
      async plan(who) {
        return {
          bearer: async () => {
            asked.push(who.subject);
            return `token-of-${who.subject}`;
          },
        };
      },
    };
    const hub = hubOf(`    url: ${server.url}\n    credentials: per-user\n`, { userCredentials: source });
    await Promise.all([echo(hub, ALICE, "a"), echo(hub, BOB, "b"), echo(hub, ALICE, "c")]);
    expect(new Set(server.seen)).toEqual(new Set(["Bearer token-of-alice", "Bearer token-of-bob"]));
    expect(asked.filter((s) => s === "alice").length).toBe(
      server.seen.filter((s) => s === "Bearer token-of-alice").length,
    );
    expect(hub.servers()[0]).toMatchObject({ userConnections: 2 });
  });

  it("fails the call with what the source refused, naming no one else's credential", async () => {
    const server = await guarded("authorization");
    const hub = hubOf(`    url: ${server.url}\n    credentials: per-user\n`, {
      userCredentials: {
        async plan() {
          throw Object.assign(new Error("fx: the provider refused the exchange: invalid_grant"), {
            code: "TOKEN_EXCHANGE_FAILED",
          });
        },
      },
    });
    await expect(hub.findTool("fx__echo", { user: ALICE })).rejects.toThrow(
      "refused the exchange: invalid_grant",
    );
    expect(server.seen).toEqual([]);
  });
});
