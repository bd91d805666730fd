import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawHttp } from "../support/gateway.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";
import { rng } from "../support/rng.js";
import { type ConnectionsGateway, startConnectionsGateway, USERS } from "./connections-gateway.js";
import { oauthRecord, TestVault, testRevoke, testUserKey, testUserOf, valuesRecord } from "./test-vault.js";

// Two signed-in users, neither an operator, hammer the connection endpoints at once: listing
// theirs, disconnecting their own servers, the other's, names crafted to reach past their own
// records (dot segments, encoded slashes, the other's key, case and padding variants, NUL, very
// long), and the operator endpoints. Whatever the mix, each sees only their own records, only
// their own records leave the vault, and the revoke function is only ever asked for the caller.

const SERVERS = ["github", "notion", "jira", "linear", "slack"];
/** Names a user may send hoping to land on someone else's record. */
function craftedNames(otherKey: string): string[] {
  return [
    "../users",
    `../users/${otherKey}/connections`,
    "github/../notion",
    "..",
    ".",
    "GITHUB",
    "github ",
    " github",
    "github\u0000",
    "notion?x=1",
    "github#notion",
    otherKey,
    "x".repeat(2000),
    "github%2Fnotion",
  ];
}

let as: AuthServer;
let gw: ConnectionsGateway;
const vault = new TestVault();
const revoke = testRevoke(vault);
const tokens = new Map<string, string>();
const key = (sub: string) => testUserKey(as.issuer, sub);

beforeAll(async () => {
  as = await startAuthServer({ users: USERS });
  gw = await startConnectionsGateway(as, { vault, userOf: testUserOf, revoke });
  for (const sub of ["alice", "bob"])
    tokens.set(sub, (await as.signIn({ user: sub, resource: gw.origin, scopes: ["mcp:tools"] })).accessToken);
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await as?.close();
});

/** Gives `sub` a random set of the servers (at least one). */
async function connectSome(sub: string, random: () => number): Promise<void> {
  await vault.delete(key(sub));
  for (const server of SERVERS)
    if (random() < 0.6)
      await vault.put(key(sub), server, random() < 0.5 ? oauthRecord(sub) : valuesRecord(sub));
  if ((await vault.servers(key(sub))).length === 0) await vault.put(key(sub), "github", oauthRecord(sub));
}

describe("two users against each other's connections", {
  timeout: attackTimeout(120_000, 900_000),
}, () => {
  it("each sees and ends their own only, under interleaved requests", async () => {
    const random = rng(26);
    const rounds = attackSize(15, 400);
    const perRound = 16;
    let requests = 0;
    let crossings = 0;
    const statuses: Record<string, number> = {};
    for (let round = 0; round < rounds; round++) {
      await connectSome("alice", random);
      await connectSome("bob", random);
      const before = {
        alice: new Set(await vault.servers(key("alice"))),
        bob: new Set(await vault.servers(key("bob"))),
      };
      /** What each user ended themselves this round (200 answers to their own DELETEs). */
      const ended = { alice: new Set<string>(), bob: new Set<string>() };
      const batch = Array.from({ length: perRound }, async () => {
        const me = random() < 0.5 ? "alice" : "bob";
        const other = me === "alice" ? "bob" : "alice";
        const headers = { authorization: `Bearer ${tokens.get(me)}` };
        const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
        const kind = pick(["list", "own", "others", "crafted", "operator-list", "operator-revoke"] as const);
        let path: string;
        let method = "DELETE";
        switch (kind) {
          case "list":
            path = "/api/connections";
            method = "GET";
            break;
          case "own":
            path = `/api/connections/${encodeURIComponent(pick([...before[me]]))}`;
            break;
          case "others":
            path = `/api/connections/${encodeURIComponent(pick([...before[other]]))}`;
            break;
          case "crafted":
            path = `/api/connections/${encodeURIComponent(pick(craftedNames(key(other))))}`;
            break;
          case "operator-list":
            path = "/api/users";
            method = "GET";
            break;
          case "operator-revoke":
            path = `/api/users/${encodeURIComponent(key(other))}/connections${random() < 0.5 ? "" : `/${pick(SERVERS)}`}`;
            break;
        }
        const res = await rawHttp(`${gw.origin}${path}`, { method, headers });
        requests++;
        statuses[`${kind} ${res.status}`] = (statuses[`${kind} ${res.status}`] ?? 0) + 1;
        if (kind === "list") {
          const listed = (res.json as { connections: Array<{ server: string }> }).connections.map(
            (c) => c.server,
          );
          // Only servers the user held this round, never one only the other held.
          if (listed.some((s) => !before[me].has(s))) crossings++;
        }
        if (method === "DELETE" && res.status === 200) {
          const { servers } = res.json as { servers: Array<{ server: string }> };
          // A name both hold is the caller's own to end; one only the other held is a crossing.
          for (const s of servers) {
            if (!before[me].has(s.server)) crossings++;
            ended[me].add(s.server);
          }
        }
      });
      await Promise.all(batch);
      // Each user's records are what they held less what they ended themselves.
      for (const sub of ["alice", "bob"] as const) {
        const expected = [...before[sub]].filter((s) => !ended[sub].has(s)).sort();
        const actual = (await vault.servers(key(sub))).sort();
        if (JSON.stringify(actual) !== JSON.stringify(expected)) crossings++;
      }
    }
    // The revoke function was asked for the caller's own records only, one server at a time.
    for (const [asked, server] of revoke.calls) {
      expect([key("alice"), key("bob")]).toContain(asked);
      expect(server).toBeDefined();
    }
    expect(crossings).toBe(0);
    // Every kind of attempt was made, and the forbidden ones were refused as such.
    for (const kind of ["list 200", "own 200", "operator-list 403", "operator-revoke 403"])
      expect(statuses[kind]).toBeGreaterThan(0);
    for (const [kind, count] of Object.entries(statuses))
      if (kind.startsWith("crafted ") || kind.startsWith("operator-"))
        expect(kind, `${count}`).toMatch(/ 40[34]$/);
    reportFigure(
      "connections isolation",
      `${requests} interleaved requests of two users over ${rounds} rounds, 0 crossings (${JSON.stringify(statuses)})`,
    );
  });
});
