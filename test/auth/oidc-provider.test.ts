/**
 * The test authorization server (test/support/oidc-provider.ts) against independent checkers:
 * `jose` verifies its tokens through its published JWKS, its introspection endpoint is asked
 * over HTTP, and the official SDK clients (v2 and v1) sign in through it to a small protected
 * resource that knows nothing of mcplex.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { UnauthorizedError as UnauthorizedErrorV1 } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createMcpHandler } from "@modelcontextprotocol/server";
import {
  createRemoteJWKSet,
  decodeProtectedHeader,
  type JWTPayload,
  errors as joseErrors,
  jwtVerify,
} from "jose";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Hub } from "../../src/hub/hub.js";
import { memoryOAuthStore } from "../../src/upstream/oauth.js";
import { buildFixtureServer } from "../fixtures/servers/fixture-tools.js";
import { type FetchHandler, toNodeListener } from "../fixtures/servers/node-fetch-listener.js";
import { configOf, remote } from "../support/config.js";
import {
  type AuthServer,
  CookieJar,
  connectWithSignIn,
  startAuthServer,
  TEST_REDIRECT_URI,
} from "../support/oidc-provider.js";

const RESOURCE = "http://127.0.0.1:1/mcp";
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

let as: AuthServer;
beforeAll(async () => {
  as = await startAuthServer({
    users: [
      { sub: "alice", email: "alice@example.com", groups: ["eng"] },
      { sub: "bob", email: "bob@example.com", groups: ["sales"], claims: { department: "north" } },
    ],
  });
});
afterAll(async () => {
  // Whatever the tests sent, the provider itself never failed.
  expect(as.serverErrors).toEqual([]);
  await as.close();
});

function verify(token: string, audience = RESOURCE) {
  const jwks = createRemoteJWKSet(new URL(as.endpoints.jwks));
  return jwtVerify(token, jwks, { issuer: as.issuer, audience, typ: "at+jwt" });
}

describe("the test authorization server", () => {
  it("listens on 127.0.0.1 and publishes its metadata with registration, PKCE S256 and resource indicators", async () => {
    expect(as.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const metadata = (await (
      await fetch(`${as.issuer}/.well-known/oauth-authorization-server`)
    ).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      issuer: as.issuer,
      authorization_endpoint: as.endpoints.authorization,
      token_endpoint: as.endpoints.token,
      registration_endpoint: as.endpoints.registration,
      jwks_uri: as.endpoints.jwks,
      introspection_endpoint: as.endpoints.introspection,
      revocation_endpoint: as.endpoints.revocation,
      code_challenge_methods_supported: ["S256"],
      authorization_response_iss_parameter_supported: true,
    });
  });

  it("signs a user in through the code flow and issues a JWT for the resource that verifies against its JWKS", async () => {
    as.resetCounts();
    const result = await as.signIn({ user: "alice", resource: RESOURCE });
    const { payload, protectedHeader } = await verify(result.accessToken);
    expect(protectedHeader).toMatchObject({ alg: "RS256", typ: "at+jwt", kid: as.signingKey("RS256").kid });
    expect(payload).toMatchObject({
      iss: as.issuer,
      aud: RESOURCE,
      sub: "alice",
      email: "alice@example.com",
      groups: ["eng"],
      scope: "mcp:tools",
      client_id: result.client.clientId,
    });
    expect(result.scope).toBe("mcp:tools");
    expect(as.jwksFetches).toBe(1);
    expect(as.serverErrors).toEqual([]);
  });

  it("gives each user their own claims, and a step-up sign-in adds the scopes asked", async () => {
    const first = await as.signIn({ user: "bob", resource: RESOURCE });
    expect((await verify(first.accessToken)).payload).toMatchObject({
      sub: "bob",
      groups: ["sales"],
      department: "north",
      scope: "mcp:tools",
    });
    const jar = new CookieJar();
    const stepUp = await as.signIn({
      user: "bob",
      resource: RESOURCE,
      scopes: ["mcp:tools", "github:write"],
      client: first.client,
      jar,
    });
    expect((await verify(stepUp.accessToken)).payload.scope).toBe("mcp:tools github:write");
  });

  it("leaves out of the token the scopes the resource does not define", async () => {
    const result = await as.signIn({ user: "alice", resource: RESOURCE, scopes: ["openid", "mcp:tools"] });
    expect((await verify(result.accessToken)).payload.scope).toBe("mcp:tools");
    expect(result.idToken).toBeDefined();
  });

  it("signs with ES256 for a resource set to it", async () => {
    const resource = "http://127.0.0.1:2/mcp";
    as.setResource(resource, { alg: "ES256", scopes: ["mcp:tools"] });
    const { accessToken } = await as.signIn({ user: "alice", resource });
    const { protectedHeader } = await verify(accessToken, resource);
    expect(protectedHeader).toMatchObject({ alg: "ES256", kid: as.signingKey("ES256").kid });
  });

  it("issues an opaque token for a resource set to it, which introspection reports active with the user's claims", async () => {
    const resource = "http://127.0.0.1:3/mcp";
    as.setResource(resource, { format: "opaque" });
    as.resetCounts();
    const { accessToken, client } = await as.signIn({ user: "bob", resource });
    expect(accessToken.split(".")).toHaveLength(1);

    const introspect = async (token: string) => {
      const { clientId, clientSecret } = as.resourceServerClient;
      const response = await fetch(as.endpoints.introspection, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ token }).toString(),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as Record<string, unknown>;
    };
    expect(await introspect(accessToken)).toMatchObject({
      active: true,
      iss: as.issuer,
      aud: resource,
      sub: "bob",
      email: "bob@example.com",
      groups: ["sales"],
      scope: "mcp:tools",
      client_id: client.clientId,
      token_type: "Bearer",
    });
    expect(await introspect("not-a-token-it-issued")).toEqual({ active: false });
    expect(as.introspections).toBe(2);

    const revoked = await fetch(as.endpoints.revocation, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: accessToken, client_id: client.clientId }).toString(),
    });
    expect(revoked.status).toBe(200);
    expect(await introspect(accessToken)).toEqual({ active: false });
  });

  it("refreshes a sign-in that asked offline_access", async () => {
    const first = await as.signIn({
      user: "alice",
      resource: RESOURCE,
      scopes: ["offline_access", "mcp:tools"],
    });
    expect(first.refreshToken).toBeDefined();
    const second = await as.refresh(first);
    expect(second.accessToken).not.toBe(first.accessToken);
    expect((await verify(second.accessToken)).payload).toMatchObject({ sub: "alice", scope: "mcp:tools" });
  });

  it("lets only its own users sign in, and a refusal at the consent page reaches the client", async () => {
    await expect(as.signIn({ user: "mallory", resource: RESOURCE })).rejects.toThrow(/no user mallory/);
    const client = await as.registerClient();
    const url = new URL(as.endpoints.authorization);
    url.search = new URLSearchParams({
      client_id: client.clientId,
      response_type: "code",
      redirect_uri: TEST_REDIRECT_URI,
      scope: "mcp:tools",
      resource: RESOURCE,
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
    }).toString();
    await expect(as.approve(url, { user: "mallory" })).rejects.toThrow(/403.*No user named mallory/);
    const refused = await as.approve(url, { user: "alice", decision: "deny" });
    expect(refused.get("error")).toBe("access_denied");
    expect(refused.get("code")).toBeNull();
  });

  it("mints tokens with its own keys for the hostile tests, and forgeries that its JWKS rejects", async () => {
    const base = { sub: "alice", aud: RESOURCE, scope: "mcp:tools" };
    expect((await verify(await as.sign(base))).payload).toMatchObject({ ...base, iss: as.issuer });
    const es = await as.sign(base, { alg: "ES256" });
    expect(decodeProtectedHeader(es)).toMatchObject({ alg: "ES256", kid: as.signingKey("ES256").kid });
    await verify(es);

    const now = Math.floor(Date.now() / 1000);
    await expect(verify(await as.sign({ ...base, exp: now - 3600 }))).rejects.toBeInstanceOf(
      joseErrors.JWTExpired,
    );
    await expect(verify(await as.sign({ ...base, nbf: now + 3600 }))).rejects.toBeInstanceOf(
      joseErrors.JWTClaimValidationFailed,
    );
    await expect(verify(await as.sign({ ...base, aud: "http://elsewhere/mcp" }))).rejects.toBeInstanceOf(
      joseErrors.JWTClaimValidationFailed,
    );
    const unknownKid = await as.sign(base, { kid: "no-such-kid" });
    expect(decodeProtectedHeader(unknownKid).kid).toBe("no-such-kid");
    await expect(verify(unknownKid)).rejects.toBeInstanceOf(joseErrors.JWKSNoMatchingKey);
    const unsecured = await as.sign(base, { alg: "none" });
    expect(decodeProtectedHeader(unsecured).alg).toBe("none");
    await expect(verify(unsecured)).rejects.toThrow();
    const hmac = await as.sign(base, {
      alg: "HS256",
      kid: as.signingKey().kid,
      key: new TextEncoder().encode(as.signingKey().publicPem),
    });
    expect(decodeProtectedHeader(hmac)).toMatchObject({ alg: "HS256", kid: as.signingKey().kid });
    await expect(verify(hmac)).rejects.toThrow();

    const other = await startAuthServer();
    try {
      const foreign = await other.sign({ ...base, iss: as.issuer });
      await expect(verify(foreign)).rejects.toBeInstanceOf(joseErrors.JWKSNoMatchingKey);
      const foreignKeyOwnKid = await as.sign(base, { key: other.signingKey(), kid: as.signingKey().kid });
      await expect(verify(foreignKeyOwnKid)).rejects.toBeInstanceOf(
        joseErrors.JWSSignatureVerificationFailed,
      );
    } finally {
      await other.close();
    }
  });

  it("counts every JWKS fetch", async () => {
    as.resetCounts();
    for (let i = 0; i < 3; i++) expect((await fetch(as.endpoints.jwks)).status).toBe(200);
    expect(as.jwksFetches).toBe(3);
    expect(as.introspections).toBe(0);
  });
});

describe("key rotation and outages", () => {
  let rotating: AuthServer;
  beforeAll(async () => {
    rotating = await startAuthServer();
  });
  afterAll(() => rotating.close());

  const verifyAt = (server: AuthServer, token: string) =>
    jwtVerify(token, createRemoteJWKSet(new URL(server.endpoints.jwks)), {
      issuer: server.issuer,
      audience: RESOURCE,
    });

  it("signs with a new kid after rotateKeys, same issuer, old key still published, clients kept", async () => {
    const issuer = rotating.issuer;
    const before = await rotating.signIn({ user: "alice", resource: RESOURCE });
    const oldKid = decodeProtectedHeader(before.accessToken).kid;
    const [fresh] = await rotating.rotateKeys();
    expect(rotating.issuer).toBe(issuer);
    expect(rotating.signingKey().kid).toBe(fresh?.kid);
    expect(fresh?.kid).not.toBe(oldKid);

    const after = await rotating.signIn({ user: "alice", resource: RESOURCE, client: before.client });
    expect(decodeProtectedHeader(after.accessToken).kid).toBe(fresh?.kid);
    await verifyAt(rotating, after.accessToken);
    await verifyAt(rotating, before.accessToken);
    const published = ((await (await fetch(rotating.endpoints.jwks)).json()) as { keys: { kid: string }[] })
      .keys;
    expect(published.map((k) => k.kid)).toEqual(expect.arrayContaining([fresh?.kid, oldKid]));
  });

  it("with dropOld, tokens of the old keys no longer verify against its JWKS", async () => {
    const before = await rotating.sign({ sub: "alice", aud: RESOURCE });
    await rotating.rotateKeys({ dropOld: true });
    expect(rotating.keys).toHaveLength(2);
    await expect(verifyAt(rotating, before)).rejects.toBeInstanceOf(joseErrors.JWKSNoMatchingKey);
    await verifyAt(rotating, await rotating.sign({ sub: "alice", aud: RESOURCE }));
  });

  it("refuses connections when stopped and serves the same keys on the same issuer when started again", async () => {
    const issuer = rotating.issuer;
    const kids = rotating.keys.map((k) => k.kid);
    await rotating.stop();
    expect(rotating.running).toBe(false);
    await expect(fetch(rotating.endpoints.jwks)).rejects.toThrow(TypeError);
    await rotating.start();
    expect(rotating.issuer).toBe(issuer);
    const published = ((await (await fetch(rotating.endpoints.jwks)).json()) as { keys: { kid: string }[] })
      .keys;
    expect(published.map((k) => k.kid)).toEqual(kids);
    await rotating.signIn({ user: "bob", resource: RESOURCE });
  });
});

describe("the sign-in pages in a browser", { timeout: 60_000 }, () => {
  it("Chromium signs in and consents through the pages, and the code it brings back is exchanged", async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    try {
      const page = await browser.newPage();
      // Nothing listens at the redirect URI: the browser's request for it is caught here.
      const callback = new Promise<URL>((resolve) => {
        void page.route(
          (url) => url.href.startsWith(TEST_REDIRECT_URI),
          async (route) => {
            resolve(new URL(route.request().url()));
            await route.fulfill({ status: 200, contentType: "text/plain", body: "signed in" });
          },
        );
      });
      const pending = await as.beginSignIn({ resource: RESOURCE, scopes: ["mcp:tools", "github:write"] });
      await page.goto(pending.url.href);
      await page.fill('input[name="login"]', "bob");
      await page.fill('input[name="password"]', "anything");
      await page.click('button:has-text("Sign in")');
      await page.click('button:has-text("Allow")');
      const result = await pending.finish((await callback).searchParams);
      expect((await verify(result.accessToken)).payload).toMatchObject({
        sub: "bob",
        groups: ["sales"],
        scope: "mcp:tools github:write",
      });
    } finally {
      await browser.close();
    }
  });
});

/**
 * A protected resource of the MCP authorization spec in a few lines, standing in for mcplex:
 * RFC 9728 metadata, 401 with `resource_metadata` without a token that `jose` accepts for its
 * own URL, 403 `insufficient_scope` for the `fail` tool without `github:write`, and otherwise
 * the fixture MCP server (SDK v2 `createMcpHandler`).
 */
async function startProtectedResource(server: AuthServer) {
  const mcp = createMcpHandler(() => buildFixtureServer({ longDottedName: false }), { legacy: "stateless" });
  const jwks = createRemoteJWKSet(new URL(server.endpoints.jwks));
  const seen: JWTPayload[] = [];
  let base = "";
  const challenge = (status: number, extra = "") =>
    new Response(null, {
      status,
      headers: {
        "www-authenticate": `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"${extra}`,
      },
    });
  const guard: FetchHandler = async (request) => {
    const { pathname } = new URL(request.url);
    if (pathname.startsWith("/.well-known/oauth-protected-resource")) {
      return Response.json({
        resource: `${base}/mcp`,
        authorization_servers: [server.issuer],
        scopes_supported: ["mcp:tools"],
        bearer_methods_supported: ["header"],
      });
    }
    if (pathname !== "/mcp") return new Response(null, { status: 404 });
    const token = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1] ?? "";
    let claims: JWTPayload;
    try {
      claims = (
        await jwtVerify(token, jwks, { issuer: server.issuer, audience: `${base}/mcp`, typ: "at+jwt" })
      ).payload;
    } catch {
      return challenge(401);
    }
    seen.push(claims);
    if (request.method === "POST") {
      const message = (await request.clone().json()) as { method?: string; params?: { name?: string } };
      const scopes = String(claims.scope ?? "").split(" ");
      if (
        message.method === "tools/call" &&
        message.params?.name === "fail" &&
        !scopes.includes("github:write")
      ) {
        return challenge(403, ', error="insufficient_scope", scope="mcp:tools github:write"');
      }
    }
    return mcp.fetch(request);
  };
  const http: Server = createServer(toNodeListener(guard));
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url: new URL(`${base}/mcp`),
    seen,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await mcp.close();
    },
  };
}

describe("the SDK clients sign in through the test authorization server", () => {
  let resource: Awaited<ReturnType<typeof startProtectedResource>>;
  beforeAll(async () => {
    resource = await startProtectedResource(as);
  });
  afterAll(() => resource.close());

  it("SDK v2: 401, discovery, registration, code + PKCE, then a tool call; a step-up for a missing scope", async () => {
    const auth = as.clientProvider({ user: "alice" });
    const client = new Client({ name: "oidc-test", version: "1.0.0" });
    const makeTransport = () => new StreamableHTTPClientTransport(resource.url, { authProvider: auth });
    const transport = await connectWithSignIn(client, makeTransport, auth);
    try {
      expect(auth.redirects).toBe(1);
      const echoed = await client.callTool({ name: "echo", arguments: { message: "signed in" } });
      expect(echoed.content).toEqual([{ type: "text", text: "echo: signed in" }]);
      const claims = resource.seen.at(-1);
      expect(claims).toMatchObject({
        sub: "alice",
        groups: ["eng"],
        aud: resource.url.href,
        scope: "mcp:tools",
      });

      // `fail` wants github:write: the SDK asks the user again with the union of scopes.
      const error = await client.callTool({ name: "fail", arguments: {} }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnauthorizedError);
      expect(auth.redirects).toBe(2);
      await transport.finishAuth(auth.takeCallback());
      const failed = await client.callTool({ name: "fail", arguments: {} });
      expect(failed.isError).toBe(true);
      expect(resource.seen.at(-1)?.scope).toBe("mcp:tools github:write");
    } finally {
      await client.close();
    }
  });

  it("SDK v1: the same provider object completes the flow and calls a tool", async () => {
    const auth = as.clientProvider({ user: "bob" });
    const client = new ClientV1({ name: "oidc-test-v1", version: "1.0.0" });
    const first = new StreamableHTTPClientTransportV1(resource.url, { authProvider: auth });
    const error = await client.connect(first).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedErrorV1);
    await first.finishAuth(auth.takeCallback().get("code") ?? "");
    await client.connect(new StreamableHTTPClientTransportV1(resource.url, { authProvider: auth }));
    try {
      const echoed = await client.callTool({ name: "echo", arguments: { message: "v1" } });
      expect(echoed.content).toEqual([{ type: "text", text: "echo: v1" }]);
      expect(resource.seen.at(-1)).toMatchObject({ sub: "bob", groups: ["sales"] });
    } finally {
      await client.close();
    }
  });

  it("mcplex's own OAuth client (a hub's upstream) signs in through it with an authorizer", async () => {
    const config = configOf([
      remote("guarded", resource.url.href, "streamable-http", {
        oauth: { grant: "authorization_code", redirectUrl: TEST_REDIRECT_URI, clientName: "mcplex hub" },
      }),
    ]);
    const hub = new Hub({ config, oauth: { store: memoryOAuthStore(), authorize: as.authorizer("alice") } });
    await hub.start();
    try {
      expect(hub.servers()[0]?.state).toBe("ready");
      const result = await hub.callTool("guarded__echo", { message: "hub" });
      expect(result.content).toEqual([{ type: "text", text: "echo: hub" }]);
      expect(resource.seen.at(-1)).toMatchObject({ sub: "alice", aud: resource.url.href });
    } finally {
      await hub.close();
    }
  });
});
