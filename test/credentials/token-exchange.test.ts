/**
 * RFC 8693 token exchange for `credentials: { exchange }`, against real OAuth parts: the test
 * oidc-provider signs users in (their tokens name the gateway) and exchanges their tokens
 * (its custom grant, with a per-client policy), and a remote MCP server checks every request's
 * token against the provider's keys and answers with its `sub`. The SDK v2 client calls that
 * server through `bearerFetch(plan.bearer)`, as a per-user connection does.
 */
import { createHash } from "node:crypto";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerConfig, TokenExchangeConfig } from "../../src/config/types.js";
import { TokenExchangeSource } from "../../src/credentials/token-exchange.js";
import type { UserRef } from "../../src/credentials/user-credentials.js";
import { McplexError } from "../../src/errors.js";
import { type Bearer, bearerFetch } from "../../src/upstream/bearer-fetch.js";
import { remote } from "../support/config.js";
import { type AuthServer, type ExchangeClient, startAuthServer } from "../support/oidc-provider.js";
import { startTokenCheckingServer, type TokenCheckingServer } from "../support/token-checking-server.js";

/** The gateway's resource: what the users' own (subject) tokens are issued for. */
const GATEWAY = "http://127.0.0.1:1/mcp";
const SCOPES = ["notes:read"];

let as: AuthServer;
let upstream: TokenCheckingServer;
let exchanger: ExchangeClient;
let server: ServerConfig;
let alice: UserRef;
let bob: UserRef;
let aliceToken: string;
const clients: Client[] = [];

function userRef(issuer: string, sub: string, token: () => string): UserRef {
  const key = createHash("sha256").update(`${issuer}\n${sub}`).digest("base64url");
  return { key, subject: sub, issuer, subjectToken: token };
}

async function signedIn(sub: string, at: AuthServer = as): Promise<{ user: UserRef; token: string }> {
  const { accessToken } = await at.signIn({ user: sub, resource: GATEWAY });
  return { user: userRef(at.issuer, sub, () => accessToken), token: accessToken };
}

function exchangeServer(name: string, exchange: Partial<TokenExchangeConfig> = {}): ServerConfig {
  return remote(name, upstream.url, "streamable-http", {
    credentials: {
      exchange: {
        audience: upstream.audience,
        scopes: SCOPES,
        clientId: exchanger.clientId,
        clientSecret: exchanger.clientSecret,
        ...exchange,
      },
    },
  });
}

/** Calls `whoami` on the checking server with the plan's bearer, as a per-user connection would. */
async function whoami(bearer: Bearer, tag?: string): Promise<string> {
  const client = new Client({ name: "exchange-test", version: "1.0.0" });
  clients.push(client);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(upstream.url), { fetch: bearerFetch(bearer) }),
  );
  const result = await client.callTool({ name: "whoami", arguments: tag === undefined ? {} : { tag } });
  await client.close();
  const [first] = result.content as Array<{ type: string; text: string }>;
  return first?.text ?? "";
}

/** The thrown error, which must be a McplexError. */
async function failure(promise: Promise<unknown>): Promise<McplexError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McplexError);
  return error as McplexError;
}

/** Every way an error could carry a token out: its text, hint, stack and JSON. */
function everythingOf(error: McplexError): string {
  return [error.message, error.hint, error.stack, JSON.stringify(error)].join("\n");
}

beforeAll(async () => {
  as = await startAuthServer();
  upstream = await startTokenCheckingServer({ issuer: as.issuer, jwksUri: as.endpoints.jwks });
  exchanger = await as.allowExchange({
    audiences: { [upstream.audience]: { scopes: SCOPES, ttlSeconds: 600 } },
    subjectAudiences: [GATEWAY],
  });
  server = exchangeServer("notes");
  ({ user: alice, token: aliceToken } = await signedIn("alice"));
  ({ user: bob } = await signedIn("bob"));
});

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await upstream?.close();
  expect(as.serverErrors).toEqual([]);
  await as?.close();
});

describe("TokenExchangeSource", () => {
  it("calls the server with each user's own exchanged token, never the user's token as it is", async () => {
    const source = new TokenExchangeSource({ issuers: [as.issuer] });
    const before = upstream.served.length;
    const forAlice = await source.plan(alice, server);
    const forBob = await source.plan(bob, server);
    expect(await whoami(forAlice.bearer as Bearer, "alice")).toBe("alice");
    expect(await whoami(forBob.bearer as Bearer, "bob")).toBe("bob");
    const served = upstream.served.slice(before);
    expect(served.map((call) => [call.tag, call.sub])).toEqual([
      ["alice", "alice"],
      ["bob", "bob"],
    ]);
    // The provider issued them for mcplex's client: the act claim names who exchanged.
    expect(served.every((call) => call.actor === exchanger.clientId)).toBe(true);
    const token = await (forAlice.bearer as Bearer)();
    expect(token).not.toBe(aliceToken);
    // What a pass-through would send is refused by the server: the user's token is not for it.
    const passThrough = await fetch(upstream.url, {
      method: "POST",
      headers: { authorization: `Bearer ${aliceToken}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(passThrough.status).toBe(401);
  });

  it("asks the provider with the configured audience, scopes and the access-token types", async () => {
    const source = new TokenExchangeSource({ issuers: [as.issuer] });
    const before = as.exchanges.length;
    await source.plan(alice, server);
    const [record] = as.exchanges.slice(before);
    expect(record).toMatchObject({
      clientId: exchanger.clientId,
      sub: "alice",
      audience: upstream.audience,
      outcome: "issued",
    });
  });

  it("caches a user's token until shortly before it expires, then exchanges again", async () => {
    let now = Date.now();
    const source = new TokenExchangeSource({ issuers: [as.issuer], now: () => now });
    const before = as.exchangesIssued;
    const { bearer } = await source.plan(alice, server);
    const first = await (bearer as Bearer)();
    expect(await (bearer as Bearer)()).toBe(first);
    expect(await whoami(bearer as Bearer)).toBe("alice");
    expect(as.exchangesIssued - before).toBe(1);
    // Bob's token is his own exchange.
    await source.plan(bob, server);
    expect(as.exchangesIssued - before).toBe(2);
    // 600 s tokens are renewed 30 s before they expire: at 569 s the cache still answers...
    now += 569_000;
    expect(await (bearer as Bearer)()).toBe(first);
    expect(as.exchangesIssued - before).toBe(2);
    // ...at 571 s a new token is exchanged.
    now += 2_000;
    const second = await (bearer as Bearer)();
    expect(second).not.toBe(first);
    expect(as.exchangesIssued - before).toBe(3);
    expect(await whoami(bearer as Bearer)).toBe("alice");
  });

  it("renews a short-lived token on the provider's own lifetime (a quarter of it as margin)", async () => {
    let now = Date.now();
    const shortLived = await as.allowExchange({
      audiences: { [upstream.audience]: { scopes: SCOPES, ttlSeconds: 8 } },
    });
    const short = exchangeServer("short", {
      clientId: shortLived.clientId,
      clientSecret: shortLived.clientSecret,
    });
    const source = new TokenExchangeSource({ issuers: [as.issuer], now: () => now });
    const before = as.exchangesIssued;
    const { bearer } = await source.plan(alice, short);
    now += 5_000;
    await (bearer as Bearer)();
    expect(as.exchangesIssued - before).toBe(1);
    now += 1_500;
    await (bearer as Bearer)();
    expect(as.exchangesIssued - before).toBe(2);
  });

  it("reads the lifetime from the token's exp when the provider gives no expires_in", async () => {
    let now = Date.now();
    const silent = await as.allowExchange({
      audiences: { [upstream.audience]: { scopes: SCOPES, ttlSeconds: 120, omitExpiresIn: true } },
    });
    const quiet = exchangeServer("quiet", { clientId: silent.clientId, clientSecret: silent.clientSecret });
    const source = new TokenExchangeSource({ issuers: [as.issuer], now: () => now });
    const before = as.exchangesIssued;
    const { bearer } = await source.plan(alice, quiet);
    // 120 s from exp (less up to a second of rounding), renewed 30 s ahead: kept at 85 s, not at 91 s.
    now += 85_000;
    await (bearer as Bearer)();
    expect(as.exchangesIssued - before).toBe(1);
    now += 6_000;
    await (bearer as Bearer)();
    expect(as.exchangesIssued - before).toBe(2);
  });

  it("keeps exchanging across a key rotation at the provider", async () => {
    const rotating = await startAuthServer();
    const checking = await startTokenCheckingServer({
      issuer: rotating.issuer,
      jwksUri: rotating.endpoints.jwks,
    });
    try {
      const client = await rotating.allowExchange({ audiences: { [checking.audience]: { scopes: SCOPES } } });
      const at = remote("rotating", checking.url, "streamable-http", {
        credentials: { exchange: { audience: checking.audience, scopes: SCOPES, ...client } },
      });
      const { user } = await signedIn("alice", rotating);
      const source = new TokenExchangeSource({ issuers: [rotating.issuer] });
      const first = await source.token(user, at);
      const call = async (token: string) => {
        const plain = new Client({ name: "exchange-test", version: "1.0.0" });
        clients.push(plain);
        await plain.connect(
          new StreamableHTTPClientTransport(new URL(checking.url), { fetch: bearerFetch(async () => token) }),
        );
        const result = await plain.callTool({ name: "whoami", arguments: {} });
        await plain.close();
        return (result.content as Array<{ text: string }>)[0]?.text;
      };
      // The server has the old keys from this call on.
      expect(await call(first)).toBe("alice");
      await rotating.rotateKeys();
      source.invalidate(user, at, first);
      // The old sign-in token (old key, still published) exchanges; the new token (new key) is
      // taken by the server, which fetches the keys again for its kid.
      const second = await source.token(user, at);
      expect(second).not.toBe(first);
      expect(await call(second)).toBe("alice");
      expect(rotating.serverErrors).toEqual([]);
    } finally {
      await checking.close();
      await rotating.close();
    }
  });

  it("makes one exchange for 50 concurrent asks of one user", async () => {
    const source = new TokenExchangeSource({ issuers: [as.issuer] });
    const before = as.exchanges.length;
    const plans = await Promise.all(Array.from({ length: 50 }, () => source.plan(alice, server)));
    const tokens = await Promise.all(plans.map((plan) => (plan.bearer as Bearer)()));
    expect(new Set(tokens).size).toBe(1);
    expect(as.exchanges.length - before).toBe(1);
  });

  it("refuses with the provider's answer, names the server, and asks the provider once in 30 s", async () => {
    let now = Date.now();
    const aliceOnly = await as.allowExchange({
      audiences: { [upstream.audience]: { scopes: SCOPES } },
      users: ["alice"],
    });
    const guarded = exchangeServer("guarded", {
      clientId: aliceOnly.clientId,
      clientSecret: aliceOnly.clientSecret,
    });
    const source = new TokenExchangeSource({ issuers: [as.issuer], now: () => now });
    const served = upstream.served.length;
    const before = as.exchanges.length;
    const error = await failure(source.plan(bob, guarded));
    expect(error.code).toBe("TOKEN_EXCHANGE_FAILED");
    expect(error.server).toBe("guarded");
    expect(error.message).toBe(
      `guarded: the identity provider ${as.issuer} refused to exchange your token: access_denied: tokens of bob may not be exchanged by this client`,
    );
    expect(error.hint).toMatch(/administrator/);
    expect(as.exchanges.length - before).toBe(1);
    // Asked again within 30 s: the same answer, without asking the provider.
    for (let i = 0; i < 5; i++) {
      now += 5_000;
      expect((await failure(source.plan(bob, guarded))).message).toBe(error.message);
    }
    expect(as.exchanges.length - before).toBe(1);
    // Alice, at the same server, is not held back by Bob's refusal.
    expect(await whoami((await source.plan(alice, guarded)).bearer as Bearer)).toBe("alice");
    expect(as.exchanges.length - before).toBe(2);
    // After 30 s the provider is asked again.
    now += 5_001;
    await failure(source.plan(bob, guarded));
    expect(as.exchanges.length - before).toBe(3);
    // A new sign-in (a new subject token) may try at once.
    const again = await signedIn("bob");
    await failure(source.plan(again.user, guarded));
    expect(as.exchanges.length - before).toBe(4);
    // Nothing reached the server for Bob: no call went with anyone else's token.
    expect(upstream.served.slice(served).map((call) => call.sub)).toEqual(["alice"]);
  });

  it("refuses an audience or scopes the provider's policy does not allow", async () => {
    const source = new TokenExchangeSource({ issuers: [as.issuer] });
    const otherAudience = exchangeServer("elsewhere", { audience: "https://elsewhere.example/mcp" });
    const target = await failure(source.plan(alice, otherAudience));
    expect(target.message).toMatch(
      /^elsewhere: the identity provider .* refused to exchange your token: invalid_target: /,
    );
    const moreScopes = exchangeServer("greedy", { scopes: ["notes:read", "notes:delete"] });
    const scope = await failure(source.plan(alice, moreScopes));
    expect(scope.message).toMatch(/: invalid_scope: scope notes:delete may not be asked/);
  });

  it("refuses a wrong client secret with the provider's invalid_client", async () => {
    const source = new TokenExchangeSource({ issuers: [as.issuer] });
    const wrong = exchangeServer("wrong-secret", { clientSecret: "not-the-secret" });
    const error = await failure(source.plan(alice, wrong));
    expect(error.message).toMatch(
      /^wrong-secret: the identity provider .* refused to exchange your token: invalid_client/,
    );
    expect(error.hint).toMatch(/clientSecret/);
    expect(everythingOf(error)).not.toContain("not-the-secret");
  });

  it("refuses a subject token of another issuer (the provider cannot verify it)", async () => {
    const other = await startAuthServer();
    try {
      const carol = await signedIn("alice", other);
      const source = new TokenExchangeSource({ issuers: [as.issuer, other.issuer] });
      // The server exchanges at `as`; the user signed in at `other`.
      const pinned = exchangeServer("pinned", { issuer: as.issuer });
      const error = await failure(source.plan(carol.user, pinned));
      expect(error.message).toMatch(
        /refused to exchange your token: invalid_grant: subject_token is invalid/,
      );
      expect(everythingOf(error)).not.toContain(carol.token);
      // An issuer outside auth.issuers is never sent the token at all.
      const before = other.exchanges.length;
      const unlisted = new TokenExchangeSource({ issuers: [as.issuer] });
      const refusedLocally = await failure(unlisted.plan(carol.user, server));
      expect(refusedLocally.message).toBe(
        `notes: the identity provider ${other.issuer} is not one of auth.issuers, and users' tokens are sent to none other`,
      );
      expect(other.exchanges.length).toBe(before);
    } finally {
      await other.close();
    }
  });

  it("refuses a user whose sign-in carries no token to exchange", async () => {
    const source = new TokenExchangeSource({ issuers: [as.issuer] });
    const { subjectToken: _, ...tokenless } = alice;
    const error = await failure(source.plan(tokenless, server));
    expect(error.code).toBe("TOKEN_EXCHANGE_FAILED");
    expect(error.message).toMatch(/^notes: .*your sign-in carries no token to exchange$/);
  });

  it("keeps every token out of its errors", async () => {
    const source = new TokenExchangeSource({ issuers: [as.issuer] });
    const { bearer } = await source.plan(alice, server);
    const exchanged = await (bearer as Bearer)();
    // A fresh source for each: the cache would answer for the wrong secret (same client).
    const fresh = () => new TokenExchangeSource({ issuers: [as.issuer] });
    const errors = [
      await failure(fresh().plan(alice, exchangeServer("e1", { audience: "https://nowhere.example" }))),
      await failure(fresh().plan(alice, exchangeServer("e2", { clientSecret: "x".repeat(20) }))),
      await failure(fresh().plan(alice, exchangeServer("e3", { scopes: ["admin"] }))),
    ];
    for (const error of errors) {
      const text = everythingOf(error);
      expect(text).not.toContain(aliceToken);
      expect(text).not.toContain(exchanged);
      expect(text).not.toContain(exchanger.clientSecret);
    }
  });

  it("fails without a negative cache while the provider is down, and works once it is back", async () => {
    const source = new TokenExchangeSource({ issuers: [as.issuer], timeoutMs: 5_000 });
    await as.stop();
    try {
      const error = await failure(source.plan(alice, server));
      expect(error.message).toMatch(
        new RegExp(`^notes: could not exchange your token at the identity provider ${as.issuer}: `),
      );
      expect(error.retryable).toBe(true);
    } finally {
      await as.start();
    }
    expect(await whoami((await source.plan(alice, server)).bearer as Bearer)).toBe("alice");
  });

  it("exchanges an opaque subject token, which the provider finds in its own store", async () => {
    const opaqueGateway = "http://127.0.0.1:2/mcp";
    as.setResource(opaqueGateway, { format: "opaque" });
    const { accessToken } = await as.signIn({ user: "bob", resource: opaqueGateway });
    expect(accessToken.split(".")).toHaveLength(1);
    const fromOpaque = await as.allowExchange({
      audiences: { [upstream.audience]: { scopes: SCOPES } },
      subjectAudiences: [opaqueGateway],
    });
    const opaqueServer = exchangeServer("opaque", {
      clientId: fromOpaque.clientId,
      clientSecret: fromOpaque.clientSecret,
    });
    const source = new TokenExchangeSource({ issuers: [as.issuer] });
    const user = userRef(as.issuer, "bob", () => accessToken);
    expect(await whoami((await source.plan(user, opaqueServer)).bearer as Bearer)).toBe("bob");
    // A JWT of the same user for the gateway is not from the audience this client exchanges from.
    const refused = await failure(new TokenExchangeSource({ issuers: [as.issuer] }).plan(bob, opaqueServer));
    expect(refused.message).toMatch(
      /invalid_grant: subject_token was not issued for an audience this client may exchange from$/,
    );
  });

  it("keeps at most maxEntries tokens, and forgets a user's, for every server or one, on demand", async () => {
    const bounded = new TokenExchangeSource({ issuers: [as.issuer], maxEntries: 1 });
    let before = as.exchangesIssued;
    await bounded.token(alice, server);
    await bounded.token(bob, server);
    await bounded.token(alice, server);
    expect(as.exchangesIssued - before).toBe(3);

    const source = new TokenExchangeSource({ issuers: [as.issuer] });
    await source.token(alice, server);
    await source.token(bob, server);
    before = as.exchangesIssued;
    source.forget(alice.key);
    await source.token(bob, server);
    expect(as.exchangesIssued - before).toBe(0);
    await source.token(alice, server);
    expect(as.exchangesIssued - before).toBe(1);

    // One server only: the user's token for another server stays.
    const bare = exchangeServer("bare", { scopes: [] });
    await source.token(alice, bare);
    before = as.exchangesIssued;
    source.forget(alice.key, bare);
    await source.token(alice, server);
    expect(as.exchangesIssued - before).toBe(0);
    await source.token(alice, bare);
    expect(as.exchangesIssued - before).toBe(1);
  });

  it("a cancelled caller stops waiting; the shared exchange still serves the others", async () => {
    const source = new TokenExchangeSource({ issuers: [as.issuer] });
    const controller = new AbortController();
    const cancelled = source.token(alice, server, controller.signal);
    const other = source.token(alice, server);
    controller.abort();
    expect((await failure(cancelled)).code).toBe("REQUEST_ABORTED");
    expect(await other).toMatch(/^ey/);
    // Cancelled before it asks: the same typed error, and no exchange.
    const before = as.exchanges.length;
    const early = await failure(source.token(bob, server, controller.signal));
    expect(early.code).toBe("REQUEST_ABORTED");
    expect(as.exchanges.length).toBe(before);
  });
});

describe("bearerFetch", () => {
  it("gets a fresh token once when the server answers 401 to the cached one", async () => {
    const source = new TokenExchangeSource({ issuers: [as.issuer] });
    const { bearer } = await source.plan(alice, server);
    const stale = await (bearer as Bearer)();
    const jti = JSON.parse(Buffer.from(stale.split(".")[1] ?? "", "base64url").toString()).jti as string;
    upstream.revoke(jti);
    const refused = upstream.refused;
    const before = as.exchangesIssued;
    expect(await whoami(bearer as Bearer)).toBe("alice");
    expect(upstream.refused - refused).toBe(1);
    expect(as.exchangesIssued - before).toBe(1);
    expect(await (bearer as Bearer)()).not.toBe(stale);
  });

  it("sends its bearer in place of any Authorization header the request had, and gives a second 401 back", async () => {
    const seen: string[] = [];
    let asked = 0;
    const bearer: Bearer = Object.assign(async () => `token-${++asked}`, { invalidate: () => {} });
    const fetchLike = bearerFetch(bearer, async (_url, init) => {
      seen.push(new Headers(init?.headers).get("authorization") ?? "");
      return new Response(null, { status: 401 });
    });
    const response = await fetchLike("http://127.0.0.1:1/", { headers: { authorization: "Bearer caller" } });
    expect(response.status).toBe(401);
    expect(seen).toEqual(["Bearer token-1", "Bearer token-2"]);
  });
});
