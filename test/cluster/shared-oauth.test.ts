import { createClient } from "@redis/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cluster } from "../../src/cluster/cluster.js";
import { Hub } from "../../src/hub/hub.js";
import { type Authorize, memoryOAuthStore } from "../../src/upstream/oauth.js";
import { type OAuthFixture, startOAuthFixture } from "../fixtures/servers/oauth-fixture.js";
import { approveAtOnce } from "../support/approve.js";
import { configOf, remote } from "../support/config.js";
import { type RedisProcess, startRedis } from "../support/redis.js";

// Two replicas' hubs in front of one OAuth server whose refresh tokens rotate: one replica's
// authorization and refresh serve both; the other never spends a refresh token already spent.

const SECRET = "oauth-sharing-test-secret-0123456789abc";
let server: OAuthFixture;
let redis: RedisProcess;
const clusters: Cluster[] = [];
const hubs: Hub[] = [];

beforeAll(async () => {
  [server, redis] = await Promise.all([startOAuthFixture(), startRedis()]);
});
afterAll(async () => {
  await Promise.all(hubs.map((h) => h.close()));
  await Promise.all(clusters.map((c) => c.close()));
  await server?.close();
  await redis?.stop();
});

async function replicaHub(id: string, authorize?: Authorize): Promise<Hub> {
  const cluster = new Cluster({ url: redis.url, secret: SECRET, id });
  clusters.push(cluster);
  await cluster.connect();
  const config = configOf([
    remote("guarded", server.url, "streamable-http", {
      oauth: { grant: "authorization_code", redirectUrl: "http://127.0.0.1:1/callback", clientName: "test" },
    }),
  ]);
  const hub = new Hub({
    config,
    oauth: { store: cluster.oauthStore(memoryOAuthStore()), ...(authorize ? { authorize } : {}) },
  });
  hubs.push(hub);
  await hub.start();
  return hub;
}

const texts = (results: Array<{ content: unknown[] }>) =>
  results.map((r) => (r.content[0] as { text: string }).text);

describe("upstream OAuth tokens shared by replicas", () => {
  it("authorizes once for all replicas, and refreshes a rotating token once when it expires", async () => {
    const a = await replicaHub("a", approveAtOnce);
    // b has no way to ask anyone: it can only use what a stored.
    const b = await replicaHub("b");
    expect(a.servers()[0]?.state).toBe("ready");
    expect(b.servers()[0]?.state).toBe("ready");
    expect(server.grants.authorization_code).toBe(1);

    server.expireAccessTokens();
    const refreshes = server.grants.refresh_token ?? 0;
    const calls = [a, b].flatMap((hub, h) =>
      Array.from({ length: 12 }, (_, i) => hub.callTool("guarded__echo", { message: `${h}.${i}` })),
    );
    const results = await Promise.all(calls);
    expect(texts(results)).toEqual(
      [a, b].flatMap((_, h) => Array.from({ length: 12 }, (_, i) => `echo: ${h}.${i}`)),
    );
    // One refresh for the cluster: the other replica waited, then took the new tokens.
    expect(server.grants.refresh_token).toBe(refreshes + 1);
    expect(server.grants.authorization_code).toBe(1);
  });

  it("keeps the tokens in Redis encrypted", async () => {
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      const keys = await client.keys("mcplex:oauth:*");
      expect(keys).toHaveLength(1);
      const sealed = String(await client.get(keys[0]!));
      expect(sealed).not.toContain("access_token");
      for (const token of server.liveTokens) expect(sealed).not.toContain(token);
      expect(keys[0]).not.toContain("guarded");
    } finally {
      client.destroy();
    }
  });
});
