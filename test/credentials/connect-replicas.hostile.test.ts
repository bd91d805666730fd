/**
 * A connect link across replicas (issue 32, point 7 under `cluster:`): two replicas, each with
 * its own HTTP front and the per-user pieces serve() makes (gatewayCredentials with the
 * replica's Cluster: Redis vault, links signed with the cluster's key, single-use claims in
 * Redis). Bob completes his link on replica A; a third browser reopens the same link on replica
 * B. Before, B had no memory of A's use and rebound bob's connection; now it is refused as used.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayCredentials, gatewayCredentials } from "../../src/assembly/gateway-credentials.js";
import { OAuthAuthenticator } from "../../src/auth/oauth-authenticator.js";
import { Cluster } from "../../src/cluster/cluster.js";
import { parseConfig } from "../../src/config/parse-config.js";
import type { McplexConfig } from "../../src/config/types.js";
import { userKey } from "../../src/credentials/user-ref.js";
import { type HttpFront, startHttpFront } from "../../src/fronts/http-front.js";
import { Gateway } from "../../src/gateway/gateway.js";
import { Hub } from "../../src/hub/hub.js";
import { configOf } from "../support/config.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";
import { type RedisProcess, startRedis } from "../support/redis.js";
import { LinkBrowser } from "./support/link-browser.js";
import { startWhoamiServer, type WhoamiServer } from "./support/whoami-server.js";

const SECRET = "a-cluster-secret-of-the-replicas-test-0123456789";
const USERS = ["bob", "carol"].map((sub) => ({ sub, email: `${sub}@x`, groups: [] }));
let redis: RedisProcess;
let idp: AuthServer;
let accounts: AuthServer;
let acct: WhoamiServer;
let config: McplexConfig;
const replicas: Array<{ cluster: Cluster; hub: Hub; front: HttpFront; credentials: GatewayCredentials }> = [];

beforeAll(async () => {
  [redis, idp, accounts] = await Promise.all([
    startRedis(),
    startAuthServer({ users: USERS }),
    startAuthServer({ users: USERS }),
  ]);
  acct = await startWhoamiServer(accounts);
  accounts.setResource(acct.url, { scopes: ["mcp:tools"] });
  config = parseConfig(
    `servers:
  acct:
    url: ${acct.url}
    credentials: per-user
auth:
  issuers:
    - issuer: ${idp.issuer}
  scopes: ["mcp:tools"]
`,
    { source: "mcplex.yaml", env: {} },
  );
  for (const id of ["a", "b"]) {
    const cluster = new Cluster({ url: redis.url, secret: SECRET, id });
    await cluster.connect();
    const authenticator = new OAuthAuthenticator(config.auth!);
    let origin: string | undefined;
    const credentials = await gatewayCredentials({
      config,
      cluster,
      frontOrigin: () => origin,
      authenticator: () => authenticator,
      server: (name) => config.servers.find((s) => s.name === name),
    });
    const hub = new Hub({ config: configOf([]) });
    await hub.start();
    const front = await startHttpFront(new Gateway(hub), {
      port: 0,
      authenticator,
      connect: credentials.pages,
    });
    origin = new URL(front.url).origin;
    replicas.push({ cluster, hub, front, credentials });
  }
}, 60_000);
afterAll(async () => {
  for (const { cluster, hub, front } of replicas) {
    await front.close();
    await hub.close();
    await cluster.close();
  }
  await acct?.close();
  await idp?.close();
  await accounts?.close();
  await redis?.stop();
});

/** Whose upstream account the grant stored for bob is (its access token's `sub`), as replica `at` reads it. */
async function bobsGrant(at: number): Promise<string> {
  const record = await replicas[at]!.credentials.vault.get(userKey(idp.issuer, "bob"), "acct");
  const token = record?.oauth?.tokens?.access_token;
  if (token === undefined) return "nobody";
  return (JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")) as { sub: string }).sub;
}

describe("a connect link on two replicas", () => {
  it(
    "used on one replica is used on all: reopened on the other, it is refused and rebinds nothing",
    async () => {
      const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
      const link = new URL(
        a.credentials.connectUrl(
          { key: userKey(idp.issuer, "bob"), subject: "bob", issuer: idp.issuer },
          "acct",
        ),
      );
      const bob = new LinkBrowser(
        new Map([
          [idp, "bob"],
          [accounts, "bob"],
        ]),
      );
      const done = await bob.open(link);
      expect(done.status).toBe(200);
      expect(await bobsGrant(1)).toBe("bob");

      const probes = attackSize(2, 20);
      const statuses = new Map<number, number>();
      for (let i = 0; i < probes; i++) {
        // The same link, at replica b, by a browser where bob's gateway session lingers.
        const elsewhere = new URL(`${link.pathname}${link.search}`, b.front.url);
        const third = new LinkBrowser(
          new Map([
            [idp, "bob"],
            [accounts, "carol"],
          ]),
        );
        const landed = await third.open(elsewhere);
        statuses.set(landed.status, (statuses.get(landed.status) ?? 0) + 1);
        if (landed.status === 409) expect(landed.text).toContain("already been used");
      }
      const after = await bobsGrant(0);
      reportFigure(
        "link reopened on another replica (7)",
        `${probes} reopenings at b: ${[...statuses].map(([s, n]) => `${n}×${s}`).join(", ")}; bob's grant is ${after}'s`,
      );
      expect(Object.fromEntries(statuses)).toEqual({ 409: probes });
      expect(after).toBe("bob");
    },
    attackTimeout(60_000, 300_000),
  );
});
