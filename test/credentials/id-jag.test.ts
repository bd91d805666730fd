/**
 * Enterprise-managed authorization for `credentials: { idJag }` against real OAuth parts: the
 * company's identity provider (a test oidc-provider) signs users in and issues ID-JAGs by token
 * exchange under a per-client policy; the MCP server's own authorization server (a second
 * oidc-provider) redeems them with the JWT-bearer grant, checking each one (signature, issuer,
 * audience, client, resource, single use); the server checks each request's token against that
 * authorization server's keys and answers with its `sub`.
 */
import { createHash } from "node:crypto";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import type { IdJagCredentialsConfig, ServerConfig } from "../../src/config/types.js";
import { TokenExchangeSource } from "../../src/credentials/token-exchange.js";
import type { UserRef } from "../../src/credentials/user-credentials.js";
import { McplexError } from "../../src/errors.js";
import { type Bearer, bearerFetch } from "../../src/upstream/bearer-fetch.js";
import { remote } from "../support/config.js";
import { issuesOf } from "../support/config-errors.js";
import { type AuthServer, type ExchangeClient, startAuthServer } from "../support/oidc-provider.js";
import { startTokenCheckingServer, type TokenCheckingServer } from "../support/token-checking-server.js";

const GATEWAY = "http://127.0.0.1:1/mcp";
const SCOPES = ["crm:read"];

let idp: AuthServer;
let serverAs: AuthServer;
let upstream: TokenCheckingServer;
let atIdp: ExchangeClient;
let atServer: ExchangeClient;
let server: ServerConfig;
const clients: Client[] = [];

function userRef(issuer: string, sub: string, token: string): UserRef {
  const key = createHash("sha256").update(`${issuer}\n${sub}`).digest("base64url");
  return { key, subject: sub, issuer, subjectToken: () => token };
}

async function signedIn(sub: string): Promise<{ user: UserRef; token: string }> {
  const { accessToken } = await idp.signIn({ user: sub, resource: GATEWAY });
  return { user: userRef(idp.issuer, sub, accessToken), token: accessToken };
}

/** A client at the company's provider that may have ID-JAGs (of 300 s) naming the server's client. */
function allowIdJags(serverClientId: string): Promise<ExchangeClient> {
  const target = {
    idJag: { resources: [upstream.audience], clientId: serverClientId },
    scopes: SCOPES,
    ttlSeconds: 300,
  };
  return idp.allowExchange({
    audiences: { [serverAs.issuer]: target },
    subjectAudiences: [GATEWAY],
    users: ["alice"],
  });
}

function idJagServer(name: string, change: Partial<IdJagCredentialsConfig> = {}): ServerConfig {
  const idJag: IdJagCredentialsConfig = {
    clientId: atIdp.clientId,
    clientSecret: atIdp.clientSecret,
    serverClientId: atServer.clientId,
    serverClientSecret: atServer.clientSecret,
    scopes: SCOPES,
    ...change,
  };
  return remote(name, upstream.url, "streamable-http", { credentials: { idJag } });
}

async function whoami(bearer: Bearer): Promise<string> {
  const client = new Client({ name: "id-jag-test", version: "1.0.0" });
  clients.push(client);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(upstream.url), { fetch: bearerFetch(bearer) }),
  );
  const result = await client.callTool({ name: "whoami", arguments: {} });
  await client.close();
  return (result.content as Array<{ text: string }>)[0]?.text ?? "";
}

async function failure(promise: Promise<unknown>): Promise<McplexError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McplexError);
  return error as McplexError;
}

beforeAll(async () => {
  idp = await startAuthServer();
  serverAs = await startAuthServer({ jwtBearer: true, tokenExchange: false });
  upstream = await startTokenCheckingServer({ issuer: serverAs.issuer, jwksUri: serverAs.endpoints.jwks });
  serverAs.trustIdJags(idp.issuer, () => idp.publicJwks);
  atServer = await serverAs.allowJwtBearer({
    resources: { [upstream.audience]: { scopes: SCOPES } },
    ttlSeconds: 60,
  });
  atIdp = await allowIdJags(atServer.clientId);
  server = idJagServer("crm");
});

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await upstream?.close();
  expect(idp.serverErrors).toEqual([]);
  expect(serverAs.serverErrors).toEqual([]);
  await idp?.close();
  await serverAs?.close();
});

describe("credentials: { idJag }", () => {
  it("is read from the config, and refused with the fix when half of it is missing", () => {
    const config = parseConfig(
      `servers:\n  crm:\n    url: https://crm.example.com/mcp\n    credentials:\n      idJag:\n        clientId: at-idp\n        clientSecret: s1\n        serverClientId: at-crm\n        serverClientSecret: s2\n        subjectTokenType: id_token\n        scopes: [crm:read]\n`,
      { source: "mcplex.yaml", env: {} },
    );
    expect(config.servers[0]?.credentials).toEqual({
      idJag: {
        clientId: "at-idp",
        clientSecret: "s1",
        serverClientId: "at-crm",
        serverClientSecret: "s2",
        subjectTokenType: "id_token",
        scopes: ["crm:read"],
      },
    });
    const half = issuesOf(
      `servers:\n  crm:\n    url: https://crm.example.com/mcp\n    credentials:\n      idJag:\n        clientId: at-idp\n`,
    );
    expect(half).toEqual([
      expect.objectContaining({
        path: "servers.crm.credentials.idJag",
        message: expect.stringContaining('needs "serverClientId"'),
      }),
    ]);
    const saml = issuesOf(
      `servers:\n  crm:\n    url: https://crm.example.com/mcp\n    credentials:\n      idJag: { clientId: a, serverClientId: b, subjectTokenType: saml }\n`,
    );
    expect(saml).toEqual([
      expect.objectContaining({
        path: "servers.crm.credentials.idJag.subjectTokenType",
        message: expect.stringMatching(/"access_token".*"id_token"/),
      }),
    ]);
  });

  it("calls the server with the user's token had through an ID-JAG from the company's provider", async () => {
    const { user, token } = await signedIn("alice");
    const source = new TokenExchangeSource({ issuers: [idp.issuer] });
    const exchanges = idp.exchanges.length;
    const { bearer } = await source.plan(user, server);
    expect(await whoami(bearer as Bearer)).toBe("alice");
    const [asked] = idp.exchanges.slice(exchanges);
    expect(asked).toMatchObject({
      clientId: atIdp.clientId,
      sub: "alice",
      audience: serverAs.issuer,
      kind: "id-jag",
    });
    expect(serverAs.jwtBearerGrants.at(-1)).toMatchObject({
      clientId: atServer.clientId,
      sub: "alice",
      outcome: "issued",
    });
    // The server's token is neither the user's token nor the ID-JAG.
    const served = await (bearer as Bearer)();
    expect(served).not.toBe(token);
    const header = JSON.parse(Buffer.from(served.split(".")[0] ?? "", "base64url").toString()) as {
      typ?: string;
    };
    expect(header.typ).toBe("at+jwt");
  });

  it("caches the token, and renews it with the ID-JAG it holds until that one is spent", async () => {
    let now = Date.now();
    const reusable = await serverAs.allowJwtBearer({
      resources: { [upstream.audience]: { scopes: SCOPES } },
      ttlSeconds: 60,
      reuse: true,
    });
    const asker = await allowIdJags(reusable.clientId);
    const held = idJagServer("crm-reuse", {
      clientId: asker.clientId,
      clientSecret: asker.clientSecret,
      serverClientId: reusable.clientId,
      serverClientSecret: reusable.clientSecret,
    });
    const { user } = await signedIn("alice");
    const source = new TokenExchangeSource({ issuers: [idp.issuer], now: () => now });
    const exchanges = idp.exchanges.length;
    const grants = serverAs.jwtBearerGrants.length;
    const { bearer } = await source.plan(user, held);
    const first = await (bearer as Bearer)();
    expect(await (bearer as Bearer)()).toBe(first);
    expect([idp.exchanges.length - exchanges, serverAs.jwtBearerGrants.length - grants]).toEqual([1, 1]);
    // The 60 s access token is renewed 15 s early; the 300 s ID-JAG is still held: no new ID-JAG.
    now += 50_000;
    const second = await (bearer as Bearer)();
    expect(second).not.toBe(first);
    expect([idp.exchanges.length - exchanges, serverAs.jwtBearerGrants.length - grants]).toEqual([1, 2]);
    // Past the ID-JAG's own life, a new one is asked for.
    now += 300_000;
    await (bearer as Bearer)();
    expect([idp.exchanges.length - exchanges, serverAs.jwtBearerGrants.length - grants]).toEqual([2, 3]);
    expect(await whoami(bearer as Bearer)).toBe("alice");
  });

  it("asks for one fresh ID-JAG when the authorization server refuses a held one (single use)", async () => {
    let now = Date.now();
    const { user } = await signedIn("alice");
    const source = new TokenExchangeSource({ issuers: [idp.issuer], now: () => now });
    const exchanges = idp.exchanges.length;
    const { bearer } = await source.plan(user, server);
    now += 50_000;
    await (bearer as Bearer)();
    const redeemed = serverAs.jwtBearerGrants.slice(-2).map((g) => g.outcome);
    expect(redeemed).toEqual(["invalid_grant", "issued"]);
    expect(idp.exchanges.length - exchanges).toBe(2);
    expect(await whoami(bearer as Bearer)).toBe("alice");
  });

  it("names the provider's refusal: the company decides who reaches the server", async () => {
    const { user, token } = await signedIn("bob");
    const source = new TokenExchangeSource({ issuers: [idp.issuer] });
    const grants = serverAs.jwtBearerGrants.length;
    const error = await failure(source.plan(user, server));
    expect(error.code).toBe("TOKEN_EXCHANGE_FAILED");
    expect(error.message).toContain(`the identity provider ${idp.issuer} refused to issue an ID-JAG`);
    expect(error.message).toContain("access_denied");
    expect(error.hint).toContain("administrator");
    expect(JSON.stringify([error.message, error.hint, error.stack])).not.toContain(token);
    expect(serverAs.jwtBearerGrants.length).toBe(grants);
  });

  it("names the authorization server's refusal, without the ID-JAG", async () => {
    const { user } = await signedIn("alice");
    const source = new TokenExchangeSource({ issuers: [idp.issuer] });
    const wrong = idJagServer("crm-wrong", { serverClientSecret: "not-the-secret" });
    const error = await failure(source.plan(user, wrong));
    expect(error.message).toContain(`the authorization server ${serverAs.issuer} refused the ID-JAG`);
    expect(error.hint).toContain("credentials.idJag.serverClientId and serverClientSecret of crm-wrong");
    const [asked] = idp.exchanges.slice(-1);
    expect(asked?.kind).toBe("id-jag");
    expect(error.message).not.toMatch(/eyJ[\w-]+\.[\w-]+\./);
  });

  it("sends the user's token to none but auth.issuers", async () => {
    const { user } = await signedIn("alice");
    const source = new TokenExchangeSource({ issuers: ["https://other.example.com"] });
    const before = idp.exchanges.length;
    const error = await failure(source.plan(user, server));
    expect(error.message).toContain("is not one of auth.issuers");
    expect(error.hint).toContain("credentials.idJag.issuer");
    expect(idp.exchanges.length).toBe(before);
  });
});
