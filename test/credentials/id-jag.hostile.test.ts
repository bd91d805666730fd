/**
 * What a server says is data: for `credentials: { idJag }`, the server's protected-resource
 * metadata names the authorization server that receives the ID-JAG and mcplex's client secret
 * there. A server naming an authorization server of its choosing (a rogue one) gets nothing: the
 * company's provider issues ID-JAGs only for the audiences its policy names, and mcplex asks for
 * the ID-JAG before it sends anything to the authorization server. And two users' tokens,
 * asked for at once and over and over, never cross.
 */
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { IdJagCredentialsConfig, ServerConfig } from "../../src/config/types.js";
import { TokenExchangeSource } from "../../src/credentials/token-exchange.js";
import type { UserRef } from "../../src/credentials/user-credentials.js";
import { McplexError } from "../../src/errors.js";
import type { Bearer } from "../../src/upstream/bearer-fetch.js";
import { remote } from "../support/config.js";
import { attackSize } from "../support/hostile.js";
import { type AuthServer, type ExchangeClient, startAuthServer } from "../support/oidc-provider.js";
import { startTokenCheckingServer, type TokenCheckingServer } from "../support/token-checking-server.js";

let idp: AuthServer;
let serverAs: AuthServer;
let crm: TokenCheckingServer;
let lure: TokenCheckingServer;
let rogue: Server;
let rogueIssuer: string;
/** Requests the rogue authorization server got at its token endpoint. */
const rogueTokenRequests: string[] = [];
let asker: ExchangeClient;
let redeemer: ExchangeClient;

function idJag(server: string, url: string): ServerConfig {
  const config: IdJagCredentialsConfig = {
    clientId: asker.clientId,
    clientSecret: asker.clientSecret,
    serverClientId: redeemer.clientId,
    serverClientSecret: redeemer.clientSecret,
  };
  return remote(server, url, "streamable-http", { credentials: { idJag: config } });
}

async function user(sub: string): Promise<UserRef> {
  const { accessToken } = await idp.signIn({ user: sub, resource: "http://127.0.0.1:1/mcp" });
  const key = createHash("sha256").update(`${idp.issuer}\n${sub}`).digest("base64url");
  return { key, subject: sub, issuer: idp.issuer, subjectToken: () => accessToken };
}

/** The `sub` of a JWT, read without checking (the server checked it). */
function subOf(token: string): unknown {
  return (JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString()) as { sub?: unknown })
    .sub;
}

beforeAll(async () => {
  rogue = createServer((req, res) => {
    if (req.method === "POST") {
      let body = "";
      req.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on("end", () => {
        rogueTokenRequests.push(`${req.headers.authorization ?? ""} ${body}`);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ access_token: "rogue", token_type: "Bearer" }));
      });
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        issuer: rogueIssuer,
        token_endpoint: `${rogueIssuer}/token`,
        response_types_supported: ["code"],
      }),
    );
  });
  await new Promise<void>((resolve) => rogue.listen(0, "127.0.0.1", resolve));
  rogueIssuer = `http://127.0.0.1:${(rogue.address() as AddressInfo).port}`;
  idp = await startAuthServer();
  serverAs = await startAuthServer({ jwtBearer: true, tokenExchange: false });
  crm = await startTokenCheckingServer({ issuer: serverAs.issuer, jwksUri: serverAs.endpoints.jwks });
  // A server whose metadata names the rogue authorization server.
  lure = await startTokenCheckingServer({ issuer: rogueIssuer, jwksUri: serverAs.endpoints.jwks });
  serverAs.trustIdJags(idp.issuer, () => idp.publicJwks);
  redeemer = await serverAs.allowJwtBearer({ resources: { [crm.audience]: {} }, ttlSeconds: 60 });
  const target = { idJag: { resources: [crm.audience], clientId: redeemer.clientId } };
  asker = await idp.allowExchange({ audiences: { [serverAs.issuer]: target } });
});

afterAll(async () => {
  await crm?.close();
  await lure?.close();
  await new Promise<void>((resolve) => rogue?.close(() => resolve()));
  await idp?.close();
  await serverAs?.close();
});

describe("credentials: { idJag } against a server that lies", () => {
  it("sends no ID-JAG and no client secret to an authorization server the provider does not name", async () => {
    const source = new TokenExchangeSource({ issuers: [idp.issuer] });
    const alice = await user("alice");
    const error = await source.plan(alice, idJag("lure", lure.url)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McplexError);
    expect((error as McplexError).message).toContain("refused to issue an ID-JAG");
    expect((error as McplexError).message).toContain("invalid_target");
    expect(rogueTokenRequests).toEqual([]);
    expect(idp.exchanges.at(-1)).toMatchObject({ audience: rogueIssuer, outcome: "invalid_target" });
  });

  it("never gives one user's token to another, however their asks interleave", async () => {
    const source = new TokenExchangeSource({ issuers: [idp.issuer] });
    const users = await Promise.all(["alice", "bob"].map(user));
    const server = idJag("crm", crm.url);
    const rounds = attackSize(10, 200);
    const asks: Array<Promise<[string, unknown]>> = [];
    for (let round = 0; round < rounds; round++) {
      for (const u of users) {
        asks.push(
          source
            .plan(u, server)
            .then(async ({ bearer }) => [u.subject, subOf(await (bearer as Bearer)())] as [string, unknown]),
        );
      }
    }
    const answers = await Promise.all(asks);
    expect(answers.filter(([asked, got]) => asked !== got)).toEqual([]);
    expect(answers).toHaveLength(rounds * 2);
  });
});
