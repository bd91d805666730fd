import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RawResponse, rawHttp } from "../support/gateway.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";
import {
  type ConnectionsGateway,
  OPERATOR_TOKEN,
  PROFILE_TOKEN,
  startConnectionsGateway,
  USERS,
} from "./connections-gateway.js";
import {
  oauthRecord,
  SECRET_ACCESS_TOKEN,
  SECRET_REFRESH_TOKEN,
  SECRET_VALUE,
  TestVault,
  testRevoke,
  testUserKey,
  testUserOf,
  valuesRecord,
} from "./test-vault.js";

// The dashboard's per-user connection endpoints (/api/connections, /api/users) with users
// signed in at a real authorization server (oidc-provider): each user sees and ends their own
// connections only, operators see and revoke everyone's, and no answer carries a token or a value.

let as: AuthServer;
const vault = new TestVault();
const revoke = testRevoke(vault);
let gw: ConnectionsGateway;
/** Every body the gateway answered, to check that none holds a secret. */
const answered: string[] = [];
const tokens = new Map<string, string>();

beforeAll(async () => {
  as = await startAuthServer({ users: USERS });
  gw = await startConnectionsGateway(as, {
    vault,
    userOf: testUserOf,
    revoke,
  });
  for (const { sub } of USERS)
    tokens.set(sub, (await as.signIn({ user: sub, resource: gw.origin, scopes: ["mcp:tools"] })).accessToken);
}, 60_000);
afterAll(async () => {
  await gw?.close();
  expect(as?.serverErrors).toEqual([]);
  await as?.close();
});

const key = (sub: string) => testUserKey(as.issuer, sub);
beforeEach(async () => {
  vault.records.clear();
  revoke.calls.length = 0;
  await vault.put(key("alice"), "github", oauthRecord("alice", 1_700_000_000_000));
  await vault.put(key("alice"), "notion", valuesRecord("alice", 1_700_000_100_000));
  await vault.put(key("bob"), "github", oauthRecord("bob", 1_700_000_200_000));
});

/** A request to the API as `who`: a user's access token, a static token, or none. */
async function api(
  method: string,
  path: string,
  who: { user?: string; token?: string; origin?: string } = {},
): Promise<RawResponse> {
  const token = who.user === undefined ? who.token : tokens.get(who.user);
  const res = await rawHttp(`${gw.origin}${path}`, {
    method,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(who.origin === undefined ? {} : { origin: who.origin }),
    },
  });
  answered.push(res.body);
  return res;
}

describe("a signed-in user's connections", { timeout: 60_000 }, () => {
  it("lists the user's own servers, when and how connected, and nothing of a token or value", async () => {
    const alice = await api("GET", "/api/connections", { user: "alice" });
    expect(alice.status).toBe(200);
    expect(alice.headers["cache-control"]).toBe("no-store");
    expect(alice.json).toEqual({
      user: { subject: "alice" },
      connections: [
        { server: "github", connectedAt: 1_700_000_000_000, kinds: ["oauth"] },
        { server: "notion", connectedAt: 1_700_000_100_000, kinds: ["values"] },
      ],
    });
    const bob = await api("GET", "/api/connections", { user: "bob" });
    expect(bob.json).toEqual({
      user: { subject: "bob" },
      connections: [{ server: "github", connectedAt: 1_700_000_200_000, kinds: ["oauth"] }],
    });
    // Carol, signed in, has connected nothing.
    expect((await api("GET", "/api/connections", { user: "carol" })).json).toEqual({
      user: { subject: "carol" },
      connections: [],
    });
  });

  it("disconnects one of the user's servers, through the revoke function, leaving the rest", async () => {
    const res = await api("DELETE", "/api/connections/github", { user: "alice" });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ servers: [{ server: "github", revocation: "revoked" }] });
    expect(revoke.calls).toEqual([[key("alice"), "github"]]);
    expect(await vault.servers(key("alice"))).toEqual(["notion"]);
    expect(await vault.servers(key("bob"))).toEqual(["github"]);
    // A server name is a path segment: encoded by the page, decoded here.
    await vault.put(key("alice"), "my server/x", valuesRecord("alice"));
    const encoded = await api("DELETE", `/api/connections/${encodeURIComponent("my server/x")}`, {
      user: "alice",
    });
    expect(encoded.json).toEqual({ servers: [{ server: "my server/x", revocation: "none" }] });
  });

  it("answers 404 for a server the user has not connected, whoever else has", async () => {
    const res = await api("DELETE", "/api/connections/github", { user: "carol" });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: 'you have not connected server "github"' });
    expect(revoke.calls).toEqual([]);
    expect(await vault.servers(key("bob"))).toEqual(["github"]);
  });

  it("does not let a user who is no operator see or revoke another's connections", async () => {
    for (const user of ["alice", "bob"]) {
      const users = await api("GET", "/api/users", { user });
      expect(users.status).toBe(403);
      expect((users.json as { error: string }).error).toContain("for operators");
    }
    const other = await api("DELETE", `/api/users/${key("bob")}/connections/github`, { user: "alice" });
    expect(other.status).toBe(403);
    const all = await api("DELETE", `/api/users/${key("bob")}/connections`, { user: "alice" });
    expect(all.status).toBe(403);
    expect(revoke.calls).toEqual([]);
    expect(await vault.servers(key("bob"))).toEqual(["github"]);
  });

  it("refuses static-token and anonymous callers: connections need a signed-in user", async () => {
    for (const token of [OPERATOR_TOKEN, PROFILE_TOKEN]) {
      for (const [method, path] of [
        ["GET", "/api/connections"],
        ["DELETE", "/api/connections/github"],
      ] as const) {
        const res = await api(method, path, { token });
        expect(res.status).toBe(403);
        expect((res.json as { error: string }).error).toContain("sign in to the gateway with OAuth");
      }
    }
    // No credential: the challenge that leads to sign-in, as everywhere on this gateway.
    const anonymous = await api("GET", "/api/connections");
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers["www-authenticate"]).toContain("resource_metadata=");
    expect(revoke.calls).toEqual([]);
  });

  it("refuses a page of another origin, and methods the endpoints do not take", async () => {
    const foreign = await api("DELETE", "/api/connections/github", {
      user: "alice",
      origin: "http://localhost:9999",
    });
    expect(foreign.status).toBe(403);
    expect(
      (await api("GET", "/api/connections", { user: "alice", origin: "http://evil.example" })).status,
    ).toBe(403);
    expect((await api("POST", "/api/connections/github", { user: "alice" })).status).toBe(405);
    expect((await api("DELETE", "/api/connections", { user: "alice" })).status).toBe(405);
    expect((await api("GET", "/api/connections/github", { user: "alice" })).status).toBe(405);
    expect((await api("GET", "/api/connections/a/b", { user: "alice" })).status).toBe(404);
    expect(revoke.calls).toEqual([]);
    expect(await vault.servers(key("alice"))).toEqual(["github", "notion"]);
  });
});

describe("an operator's view of users' connections", { timeout: 60_000 }, () => {
  it("lists every user with connections, by key and subject, to a signed-in operator and an operator token", async () => {
    const expected = {
      users: [
        {
          key: key("alice"),
          subject: "alice",
          connections: [
            { server: "github", connectedAt: 1_700_000_000_000, kinds: ["oauth"] },
            { server: "notion", connectedAt: 1_700_000_100_000, kinds: ["values"] },
          ],
        },
        {
          key: key("bob"),
          subject: "bob",
          connections: [{ server: "github", connectedAt: 1_700_000_200_000, kinds: ["oauth"] }],
        },
      ],
    };
    expect((await api("GET", "/api/users", { user: "carol" })).json).toEqual(expected);
    expect((await api("GET", "/api/users", { token: OPERATOR_TOKEN })).json).toEqual(expected);
    const profileBound = await api("GET", "/api/users", { token: PROFILE_TOKEN });
    expect(profileBound.status).toBe(403);
  });

  it("revokes one server of a user, then all of another's", async () => {
    const one = await api("DELETE", `/api/users/${key("alice")}/connections/github`, { user: "carol" });
    expect(one.status).toBe(200);
    expect(one.json).toEqual({ servers: [{ server: "github", revocation: "revoked" }] });
    expect(await vault.servers(key("alice"))).toEqual(["notion"]);
    const all = await api("DELETE", `/api/users/${key("bob")}/connections`, { token: OPERATOR_TOKEN });
    expect(all.status).toBe(200);
    expect(all.json).toEqual({ servers: [{ server: "github", revocation: "revoked" }] });
    expect(await vault.users()).toEqual([key("alice")]);
    expect(revoke.calls).toEqual([[key("alice"), "github"], [key("bob")]]);
  });

  it("answers 404 naming what is missing: an unknown user, a server the user has not connected", async () => {
    const user = await api("DELETE", "/api/users/no-such-key/connections", { user: "carol" });
    expect(user.status).toBe(404);
    expect((user.json as { error: string }).error).toBe(
      'no user "no-such-key" holds a connection (GET /api/users lists those who do)',
    );
    const server = await api("DELETE", `/api/users/${key("bob")}/connections/notion`, { user: "carol" });
    expect(server.status).toBe(404);
    expect(server.json).toEqual({
      error: `user "${key("bob")}" has not connected server "notion"`,
      hint: "the user has connected: github",
    });
    expect(revoke.calls).toEqual([]);
  });
});

describe("a gateway started without the per-user credentials", { timeout: 60_000 }, () => {
  it("answers 501 saying what is missing: no vault, or no revoke function", async () => {
    const bare = await startConnectionsGateway(as, undefined);
    const listOnly = await startConnectionsGateway(as, {
      vault,
      userOf: testUserOf,
    });
    try {
      const token = (await as.signIn({ user: "alice", resource: bare.origin, scopes: ["mcp:tools"] }))
        .accessToken;
      const auth = { authorization: `Bearer ${token}` };
      const none = await rawHttp(`${bare.origin}/api/connections`, { method: "GET", headers: auth });
      expect(none.status).toBe(501);
      expect((none.json as { error: string }).error).toContain("without a credential vault");
      const ops = { authorization: `Bearer ${OPERATOR_TOKEN}` };
      expect((await rawHttp(`${bare.origin}/api/users`, { method: "GET", headers: ops })).status).toBe(501);

      const listToken = (await as.signIn({ user: "alice", resource: listOnly.origin, scopes: ["mcp:tools"] }))
        .accessToken;
      const listAuth = { authorization: `Bearer ${listToken}` };
      const list = await rawHttp(`${listOnly.origin}/api/connections`, { method: "GET", headers: listAuth });
      expect(list.status).toBe(200);
      const end = await rawHttp(`${listOnly.origin}/api/connections/github`, {
        method: "DELETE",
        headers: listAuth,
      });
      expect(end.status).toBe(501);
      expect((end.json as { error: string }).error).toContain("without a revoke function");
      expect(await vault.servers(key("alice"))).toEqual(["github", "notion"]);
    } finally {
      await bare.close();
      await listOnly.close();
    }
  });
});

describe("what the endpoints answered", () => {
  it("holds no token, no value, no client secret", () => {
    expect(answered.length).toBeGreaterThan(20);
    const all = answered.join("\n");
    for (const secret of [
      SECRET_ACCESS_TOKEN,
      SECRET_REFRESH_TOKEN,
      SECRET_VALUE,
      "client-secret",
      "GITHUB_TOKEN",
    ])
      expect(all).not.toContain(secret);
    // Nor the users' own access tokens to the gateway.
    for (const token of tokens.values()) expect(all).not.toContain(token);
  });
});
