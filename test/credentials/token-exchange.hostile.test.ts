/**
 * Token exchange under attack, against the real parts of token-exchange.test.ts (the test
 * oidc-provider's RFC 8693 grant, a server that checks every token): two users interleaved
 * while their tokens are renewed and revoked under them, a refused user hammering, and subject
 * tokens the provider never issued. The normal suite runs each at a CI size; `npm run
 * test:hostile` at the full one, printing its figures.
 */
import { createHash } from "node:crypto";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerConfig } from "../../src/config/types.js";
import { TokenExchangeSource } from "../../src/credentials/token-exchange.js";
import type { UserRef } from "../../src/credentials/user-credentials.js";
import { McplexError } from "../../src/errors.js";
import { type Bearer, bearerFetch } from "../../src/upstream/bearer-fetch.js";
import { remote } from "../support/config.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";
import { type AuthServer, generateSigningKey, startAuthServer } from "../support/oidc-provider.js";
import { startTokenCheckingServer, type TokenCheckingServer } from "../support/token-checking-server.js";

const GATEWAY = "http://127.0.0.1:1/mcp";
const SCOPES = ["notes:read"];

let as: AuthServer;
let upstream: TokenCheckingServer;
let server: ServerConfig;

function userRef(sub: string, token: string): UserRef {
  const key = createHash("sha256").update(`${as.issuer}\n${sub}`).digest("base64url");
  return { key, subject: sub, issuer: as.issuer, subjectToken: () => token };
}

async function signedIn(sub: string): Promise<UserRef> {
  const { accessToken } = await as.signIn({ user: sub, resource: GATEWAY });
  return userRef(sub, accessToken);
}

async function connected(bearer: Bearer): Promise<Client> {
  const client = new Client({ name: "exchange-hostile", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(upstream.url), { fetch: bearerFetch(bearer) }),
  );
  return client;
}

function jtiOf(token: string): string {
  return JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString()).jti as string;
}

beforeAll(async () => {
  as = await startAuthServer();
  upstream = await startTokenCheckingServer({ issuer: as.issuer, jwksUri: as.endpoints.jwks });
  const exchanger = await as.allowExchange({
    audiences: { [upstream.audience]: { scopes: SCOPES, ttlSeconds: 600 } },
    users: ["alice", "bob"],
    subjectAudiences: [GATEWAY],
  });
  server = remote("notes", upstream.url, "streamable-http", {
    credentials: {
      exchange: {
        audience: upstream.audience,
        scopes: SCOPES,
        clientId: exchanger.clientId,
        clientSecret: exchanger.clientSecret,
      },
    },
  });
});

afterAll(async () => {
  await upstream?.close();
  expect(as.serverErrors).toEqual([]);
  await as?.close();
});

describe("token exchange under attack", () => {
  it(
    "two users interleaved while their tokens are renewed and revoked: every call served with its own user's token",
    async () => {
      const calls = attackSize(100, 1000);
      let now = Date.now();
      const source = new TokenExchangeSource({ issuers: [as.issuer], now: () => now });
      const users = [await signedIn("alice"), await signedIn("bob")];
      const exchangesBefore = as.exchangesIssued;
      const refusedBefore = upstream.refused;
      const clients = await Promise.all(
        users.map(async (user) => connected((await source.plan(user, server)).bearer as Bearer)),
      );
      const servedBefore = upstream.served.length;
      let renewals = 0;
      let revocations = 0;
      const started = performance.now();
      for (let i = 0; i < calls; i += 10) {
        if (i > 0 && i % 50 === 0) {
          // Every 50 calls the clock passes the tokens' renewal: the next asks exchange anew
          // while calls of both users are in flight.
          now += 575_000;
          renewals++;
        }
        if (i > 0 && i % 70 === 0) {
          // A revocation at the server: the next call of that user gets 401, then a fresh token.
          const victim = users[(i / 70) % 2] as UserRef;
          upstream.revoke(jtiOf(await source.token(victim, server)));
          revocations++;
        }
        const batch: Array<Promise<unknown>> = [];
        for (let j = i; j < Math.min(i + 10, calls); j++) {
          users.forEach((user, u) => {
            batch.push(
              (clients[u] as Client).callTool({ name: "whoami", arguments: { tag: `${user.subject}:${j}` } }),
            );
          });
        }
        await Promise.all(batch);
      }
      const elapsed = performance.now() - started;
      const served = upstream.served.slice(servedBefore);
      const crossings = served.filter((call) => call.tag?.split(":")[0] !== call.sub);
      expect(served.length).toBe(calls * 2);
      expect(crossings).toEqual([]);
      for (const user of users) expect(served.filter((call) => call.sub === user.subject).length).toBe(calls);
      // One exchange per user at the start and per renewal, one per revocation (however many
      // calls in flight met the 401: each revocation refused a whole batch of that user's).
      const exchanges = as.exchangesIssued - exchangesBefore;
      expect(exchanges).toBe(2 * (1 + renewals) + revocations);
      expect(upstream.refused - refusedBefore).toBeGreaterThanOrEqual(revocations);
      for (const client of clients) await client.close();
      reportFigure(
        "interleaved exchange",
        `${calls * 2} calls, 0 crossings, ${exchanges} exchanges (${renewals} renewals, ${revocations} revocations, ${upstream.refused - refusedBefore} calls refused once and resent), ${Math.round(elapsed)} ms`,
      );
    },
    attackTimeout(60_000, 300_000),
  );

  it(
    "a refused user hammering costs the provider one request per 30 s",
    async () => {
      const asks = attackSize(200, 5_000);
      const source = new TokenExchangeSource({ issuers: [as.issuer] });
      const bob = await signedIn("bob");
      // A client whose policy lets Alice alone through: every exchange of Bob's is refused.
      const refusing = await as.allowExchange({
        audiences: { [upstream.audience]: { scopes: SCOPES } },
        users: ["alice"],
      });
      const guarded = remote("guarded", upstream.url, "streamable-http", {
        credentials: { exchange: { audience: upstream.audience, scopes: SCOPES, ...refusing } },
      });
      const before = as.exchanges.length;
      const outcomes = await Promise.allSettled(
        Array.from({ length: asks }, () => source.plan(bob, guarded)),
      );
      for (let i = 0; i < asks; i++) {
        await source.plan(bob, guarded).catch(() => {});
      }
      expect(outcomes.every((o) => o.status === "rejected")).toBe(true);
      const codes = new Set(outcomes.map((o) => ((o as PromiseRejectedResult).reason as McplexError).code));
      expect([...codes]).toEqual(["TOKEN_EXCHANGE_FAILED"]);
      expect(as.exchanges.length - before).toBe(1);
      reportFigure("refused user", `${asks * 2} asks, ${as.exchanges.length - before} provider request`);
    },
    attackTimeout(30_000, 120_000),
  );

  it("subject tokens the provider never issued are refused, and nothing reaches the server", async () => {
    const stranger = await generateSigningKey("RS256");
    const now = Math.floor(Date.now() / 1000);
    const claims = { sub: "alice", aud: GATEWAY, scope: "mcp:tools" };
    const forged: Record<string, string> = {
      "another key": await as.sign(claims, { key: stranger }),
      "another key under the provider's kid": await as.sign(claims, {
        key: stranger,
        kid: as.signingKey().kid,
      }),
      "alg none": await as.sign(claims, { alg: "none" }),
      expired: await as.sign({ ...claims, iat: now - 600, nbf: now - 600, exp: now - 300 }),
      "another audience": await as.sign({ ...claims, aud: "https://elsewhere.example/mcp" }),
      "another issuer": await as.sign({ ...claims, iss: "https://evil.example" }),
      "not a JWT": "opaque-token-that-was-never-issued",
    };
    const servedBefore = upstream.served.length;
    for (const [kind, token] of Object.entries(forged)) {
      const source = new TokenExchangeSource({ issuers: [as.issuer] });
      const error = await source.plan(userRef("alice", token), server).then(
        () => undefined,
        (e: unknown) => e as McplexError,
      );
      expect(error, kind).toBeInstanceOf(McplexError);
      expect(error?.message, kind).toMatch(/refused to exchange your token: invalid_grant: /);
      expect([error?.message, error?.hint].join(" "), kind).not.toContain(token);
    }
    expect(upstream.served.length).toBe(servedBefore);
  });
});
