/**
 * The test oidc-provider's RFC 8693 grant (test/support/oidc/token-exchange-grant.ts), asked over
 * plain HTTP as the RFC writes the requests, and its tokens checked with `jose` against the
 * published keys: what other tests build on behaves as a real token-exchange server does.
 */
import { createRemoteJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ACCESS_TOKEN_TYPE,
  type AuthServer,
  type ExchangeClient,
  startAuthServer,
  TOKEN_EXCHANGE_GRANT,
} from "../support/oidc-provider.js";

const GATEWAY = "http://127.0.0.1:1/mcp";
const API = "https://api.example.com/mcp";

let as: AuthServer;
let client: ExchangeClient;
let aliceToken: string;

async function exchange(
  fields: Record<string, string>,
  as_: ExchangeClient = client,
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const basic = Buffer.from(`${encodeURIComponent(as_.clientId)}:${encodeURIComponent(as_.clientSecret)}`);
  const response = await fetch(as.endpoints.token, {
    method: "POST",
    headers: { authorization: `Basic ${basic.toString("base64")}`, accept: "application/json" },
    body: new URLSearchParams({ grant_type: TOKEN_EXCHANGE_GRANT, ...fields }),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

beforeAll(async () => {
  as = await startAuthServer({ users: [{ sub: "alice" }, { sub: "bob" }, { sub: "carol" }] });
  client = await as.allowExchange({
    audiences: { [API]: { scopes: ["api:read", "api:write"], ttlSeconds: 300 } },
    users: ["alice", "bob"],
    subjectAudiences: [GATEWAY],
  });
  aliceToken = (await as.signIn({ user: "alice", resource: GATEWAY })).accessToken;
});

afterAll(async () => {
  expect(as.serverErrors).toEqual([]);
  await as.close();
});

describe("the test provider's token exchange", () => {
  it("advertises the grant in its metadata", async () => {
    const metadata = (await (await fetch(`${as.issuer}/.well-known/openid-configuration`)).json()) as {
      grant_types_supported: string[];
    };
    expect(metadata.grant_types_supported).toContain(TOKEN_EXCHANGE_GRANT);
    const without = await startAuthServer({ tokenExchange: false });
    const plain = (await (await fetch(`${without.issuer}/.well-known/openid-configuration`)).json()) as {
      grant_types_supported: string[];
    };
    await without.close();
    expect(plain.grant_types_supported).not.toContain(TOKEN_EXCHANGE_GRANT);
  });

  it("issues a JWT for the audience with the user's sub, act naming the client, and an expiry", async () => {
    const { status, headers, body } = await exchange({
      subject_token: aliceToken,
      subject_token_type: ACCESS_TOKEN_TYPE,
      requested_token_type: ACCESS_TOKEN_TYPE,
      audience: API,
      scope: "api:read",
    });
    expect(status).toBe(200);
    expect(headers.get("cache-control")).toBe("no-store");
    expect(body).toMatchObject({
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: "Bearer",
      expires_in: 300,
      scope: "api:read",
    });
    const jwks = createRemoteJWKSet(new URL(as.endpoints.jwks));
    const { payload, protectedHeader } = await jwtVerify(String(body.access_token), jwks, {
      issuer: as.issuer,
      audience: API,
      typ: "at+jwt",
    });
    expect(protectedHeader.alg).toBe("RS256");
    expect(payload).toMatchObject({
      sub: "alice",
      act: { sub: client.clientId },
      client_id: client.clientId,
    });
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(300);
    expect(as.exchanges.at(-1)).toMatchObject({ sub: "alice", audience: API, outcome: "issued" });
  });

  it("answers each refusal with the error RFC 8693 and RFC 6749 name", async () => {
    const base = { subject_token: aliceToken, subject_token_type: ACCESS_TOKEN_TYPE, audience: API };
    const carolToken = (await as.signIn({ user: "carol", resource: GATEWAY })).accessToken;
    const otherAudience = (await as.signIn({ user: "alice", resource: "http://127.0.0.1:2/mcp" }))
      .accessToken;
    const cases: Array<[string, Record<string, string>, string]> = [
      ["no subject token", { subject_token_type: ACCESS_TOKEN_TYPE, audience: API }, "invalid_request"],
      [
        "an ID token type",
        { ...base, subject_token_type: "urn:ietf:params:oauth:token-type:id_token" },
        "invalid_request",
      ],
      [
        "a refresh token asked",
        { ...base, requested_token_type: "urn:ietf:params:oauth:token-type:refresh_token" },
        "invalid_request",
      ],
      [
        "an actor token",
        { ...base, actor_token: aliceToken, actor_token_type: ACCESS_TOKEN_TYPE },
        "invalid_request",
      ],
      ["no audience", { subject_token: aliceToken, subject_token_type: ACCESS_TOKEN_TYPE }, "invalid_target"],
      ["an audience not allowed", { ...base, audience: "https://other.example" }, "invalid_target"],
      ["a scope not allowed", { ...base, scope: "api:admin" }, "invalid_scope"],
      ["a user not allowed", { ...base, subject_token: carolToken }, "access_denied"],
      ["a token of another audience", { ...base, subject_token: otherAudience }, "invalid_grant"],
      ["a garbled token", { ...base, subject_token: `${aliceToken.slice(0, -4)}AAAA` }, "invalid_grant"],
    ];
    for (const [what, fields, error] of cases) {
      const answer = await exchange(fields);
      expect(answer.status, what).toBe(400);
      expect(answer.body.error, what).toBe(error);
      expect(answer.body.access_token, what).toBeUndefined();
    }
    const wrongSecret = await exchange(base, { clientId: client.clientId, clientSecret: "wrong" });
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.body.error).toBe("invalid_client");
    // A client registered without the grant may not use it.
    const other = await as.registerClient();
    const publicClient = await fetch(as.endpoints.token, {
      method: "POST",
      body: new URLSearchParams({ grant_type: TOKEN_EXCHANGE_GRANT, client_id: other.clientId, ...base }),
    });
    expect(((await publicClient.json()) as { error: string }).error).toMatch(
      /invalid_request|unauthorized_client/,
    );
  });

  it("counts requests and lets a test wait for the next one", async () => {
    const count = as.exchanges.length;
    const waited = as.waitForExchanges(count + 2);
    await exchange({ subject_token: aliceToken, subject_token_type: ACCESS_TOKEN_TYPE, audience: API });
    await exchange({ subject_token: "nope", subject_token_type: ACCESS_TOKEN_TYPE, audience: API });
    await waited;
    expect(as.exchanges.slice(count).map((record) => record.outcome)).toEqual(["issued", "invalid_grant"]);
  });
});
