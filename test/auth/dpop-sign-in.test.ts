import {
  Client,
  DpopSession,
  SSEClientTransport,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketClientTransport } from "../../src/upstream/websocket-transport.js";
import { resultText } from "../support/gateway.js";
import { type AuthServer, connectWithSignIn, startAuthServer } from "../support/oidc-provider.js";
import {
  type DpopClientProvider,
  type DpopGateway,
  dpopClientProvider,
  startDpopGateway,
} from "./dpop-gateway.js";

// DPoP at the gateway (RFC 9449, SEP-1932) with the official SDK client as the client: it signs
// a proof into its token request at the test authorization server (oidc-provider, DPoP on), gets
// a token bound to its key (`cnf.jkt`), and calls through /mcp, /sse and /ws with a fresh proof
// per request. The same token as a plain bearer is refused; so is an unbound token as DPoP.

const STATIC = "dpop-static-token-0123456789abcdefghij";
let as: AuthServer;
let plain: DpopGateway;
let strict: DpopGateway;

beforeAll(async () => {
  as = await startAuthServer();
  [plain, strict] = await Promise.all([
    startDpopGateway({ issuer: as.issuer }),
    startDpopGateway({ issuer: as.issuer, dpop: "required: true\nnonce: true\nwindow: 2m" }),
  ]);
}, 60_000);

afterAll(async () => {
  await plain?.close();
  await strict?.close();
  await as?.close();
});

/** Signs `user` in through the SDK over /mcp of `gw` with DPoP, and calls `mark` with `tag`. */
async function signInAndMark(gw: DpopGateway, user: string, tag: string): Promise<DpopClientProvider> {
  const auth = await dpopClientProvider(as, user);
  const client = new Client({ name: "dpop-sign-in", version: "1.0.0" });
  await connectWithSignIn(
    client,
    () => new StreamableHTTPClientTransport(new URL(`${gw.origin}/mcp`), { authProvider: auth }),
    auth,
  );
  try {
    expect(resultText(await client.callTool({ name: "fx__mark", arguments: { tag } }))).toBe(`marked ${tag}`);
  } finally {
    await client.close();
  }
  return auth;
}

/** A POST of a 2025 initialize to /mcp with `headers`: its status, challenge and body. */
async function post(gw: DpopGateway, headers: Record<string, string>) {
  const res = await fetch(`${gw.origin}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    }),
  });
  return {
    status: res.status,
    challenge: res.headers.get("www-authenticate") ?? "",
    nonce: res.headers.get("dpop-nonce"),
    body: await res.text(),
  };
}

describe("DPoP-bound tokens at the gateway", () => {
  it("the SDK client signs in with DPoP at oidc-provider and calls through /mcp; its token is bound to its key", async () => {
    const auth = await signInAndMark(plain, "alice", "mcp-dpop");
    const tokens = auth.tokens();
    expect(tokens?.token_type.toLowerCase()).toBe("dpop");
    const claims = decodeJwt(tokens!.access_token) as { cnf?: { jkt?: string } };
    expect(claims.cnf?.jkt).toBe(auth.session.thumbprint);
    expect(await plain.marks()).toContain("mcp-dpop");
  }, 60_000);

  it("refuses the bound token as a plain bearer: 401 with a DPoP invalid_token challenge, the call not run", async () => {
    const auth = await dpopClientProvider(as, "alice");
    const client = new Client({ name: "dpop-sign-in", version: "1.0.0" });
    await connectWithSignIn(
      client,
      () => new StreamableHTTPClientTransport(new URL(`${plain.origin}/mcp`), { authProvider: auth }),
      auth,
    );
    await client.close();
    const token = auth.tokens()!.access_token;
    const answer = await post(plain, { authorization: `Bearer ${token}` });
    expect(answer.status).toBe(401);
    expect(answer.challenge).toMatch(
      /^DPoP resource_metadata="[^"]+", scope="mcp:tools", algs="[^"]+", error="invalid_token"$/,
    );
    expect(answer.body).toContain("DPoP-bound");
    // With a proof of another request (a GET to /sse), the DPoP scheme is refused too.
    const proof = await auth.session.buildProof({
      htm: "GET",
      htu: `${plain.origin}/sse`,
      accessToken: token,
    });
    const wrong = await post(plain, { authorization: `DPoP ${token}`, dpop: proof });
    expect(wrong.status).toBe(401);
    expect(wrong.challenge).toContain('error="invalid_dpop_proof"');
  }, 60_000);

  it("calls through /sse (the stream and the POSTs to its message endpoint) with the SDK's SSE transport", async () => {
    const auth = await dpopClientProvider(as, "alice");
    const client = new Client({ name: "dpop-sse", version: "1.0.0" });
    await connectWithSignIn(
      client,
      () => new SSEClientTransport(new URL(`${plain.origin}/sse`), { authProvider: auth }),
      auth,
    );
    try {
      expect(resultText(await client.callTool({ name: "fx__mark", arguments: { tag: "sse-dpop" } }))).toBe(
        "marked sse-dpop",
      );
    } finally {
      await client.close();
    }
    expect(auth.tokens()?.token_type.toLowerCase()).toBe("dpop");
    expect(await plain.marks()).toContain("sse-dpop");
  }, 60_000);

  it("calls through /ws with the token and a proof of the upgrade (GET) in its headers", async () => {
    const auth = await signInAndMark(plain, "alice", "before-ws");
    const token = auth.tokens()!.access_token;
    // The SDK has no WebSocket client transport: mcplex's own sends the headers on the upgrade.
    const proof = await auth.session.buildProof({ htm: "GET", htu: plain.front.wsUrl, accessToken: token });
    const client = new Client({ name: "dpop-ws", version: "1.0.0" });
    await client.connect(
      new WebSocketClientTransport({
        url: plain.front.wsUrl,
        headers: { authorization: `DPoP ${token}`, dpop: proof },
      }),
    );
    try {
      expect(resultText(await client.callTool({ name: "fx__mark", arguments: { tag: "ws-dpop" } }))).toBe(
        "marked ws-dpop",
      );
    } finally {
      await client.close();
    }
    // The same upgrade again (its proof replayed) is refused.
    const again = new Client({ name: "dpop-ws", version: "1.0.0" });
    await expect(
      again.connect(
        new WebSocketClientTransport({
          url: plain.front.wsUrl,
          headers: { authorization: `DPoP ${token}`, dpop: proof },
        }),
      ),
    ).rejects.toThrow(/401/);
    expect(await plain.marks()).toContain("ws-dpop");
  }, 60_000);

  it("publishes DPoP in the protected-resource metadata: the algorithms, and required only when configured", async () => {
    const read = async (gw: DpopGateway) =>
      (await (await fetch(`${gw.origin}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<
        string,
        unknown
      >;
    const open = await read(plain);
    expect(open.dpop_signing_alg_values_supported).toContain("ES256");
    expect(open.dpop_bound_access_tokens_required).toBeUndefined();
    const required = await read(strict);
    expect(required.dpop_bound_access_tokens_required).toBe(true);
  });

  it("with dpop.required and dpop.nonce: the SDK client signs in, answers the use_dpop_nonce challenge and calls; a plain bearer token is refused", async () => {
    await signInAndMark(strict, "bob", "nonce-dpop");
    expect(await strict.marks()).toContain("nonce-dpop");
    // A token without cnf.jkt (signed in without DPoP) is refused on a gateway that requires it.
    const unbound = await as.signIn({ user: "bob", resource: `${strict.origin}/mcp` });
    expect((decodeJwt(unbound.accessToken) as { cnf?: unknown }).cnf).toBeUndefined();
    const bearer = await post(strict, { authorization: `Bearer ${unbound.accessToken}` });
    expect(bearer.status).toBe(401);
    expect(bearer.challenge).toMatch(/^DPoP .*error="invalid_token"/);
    // Sent as DPoP, with a valid proof of a key of its own, it is not bound: refused.
    const session = await DpopSession.create();
    const proof = await session.buildProof({
      htm: "POST",
      htu: `${strict.origin}/mcp`,
      accessToken: unbound.accessToken,
    });
    const asDpop = await post(strict, { authorization: `DPoP ${unbound.accessToken}`, dpop: proof });
    expect(asDpop.status).toBe(401);
    expect(asDpop.body).toContain("not DPoP-bound");
    // Without a credential: the DPoP challenge alone, and a nonce to sign with.
    const none = await post(strict, {});
    expect(none.status).toBe(401);
    expect(none.challenge).toMatch(/^DPoP resource_metadata=/);
  }, 60_000);

  it("takes cnf.jkt from introspection for an opaque DPoP-bound token: the SDK calls with it, and it is refused as a Bearer", async () => {
    const opaque = await startDpopGateway({
      issuer: as.issuer,
      introspection: as.resourceServerClient,
      tokens: [STATIC],
    });
    try {
      as.setResource(`${opaque.origin}/mcp`, { format: "opaque" });
      const auth = await signInAndMark(opaque, "alice", "opaque-dpop");
      const token = auth.tokens()!.access_token;
      expect(token.split(".")).toHaveLength(1);
      expect(await opaque.marks()).toContain("opaque-dpop");
      const bearer = await post(opaque, { authorization: `Bearer ${token}` });
      expect(bearer.status).toBe(401);
      expect(bearer.challenge).toMatch(/^DPoP .*error="invalid_token"/);
      expect(bearer.body).toContain("DPoP-bound");
      // A static token sent under DPoP is refused here, never introspected at the issuer.
      const before = as.introspections;
      const statik = await post(opaque, { authorization: `DPoP ${STATIC}`, dpop: "x.y.z" });
      expect(statik.status).toBe(401);
      expect(statik.body).toContain("static token is a bearer token");
      expect(as.introspections).toBe(before);
      expect((await post(opaque, { authorization: `Bearer ${STATIC}` })).status).toBe(200);
    } finally {
      await opaque.close();
    }
  }, 60_000);

  it("answers a DPoP-bound token that lacks a needed scope 403 with a DPoP insufficient_scope challenge", async () => {
    const session = await DpopSession.create();
    const token = await as.sign({
      sub: "alice",
      aud: `${plain.origin}/mcp`,
      scope: "openid",
      cnf: { jkt: session.thumbprint },
    });
    const proof = await session.buildProof({ htm: "POST", htu: `${plain.origin}/mcp`, accessToken: token });
    const answer = await post(plain, { authorization: `DPoP ${token}`, dpop: proof });
    expect(answer.status).toBe(403);
    expect(answer.challenge).toMatch(/^DPoP error="insufficient_scope", scope="[^"]*mcp:tools/);
  });

  it("hands out a fresh DPoP-Nonce on the answer to an accepted request when nonces are on", async () => {
    const auth = await signInAndMark(strict, "alice", "nonce-answer");
    const token = auth.tokens()!.access_token;
    const url = `${strict.origin}/mcp`;
    const proof = await auth.session.buildProof({ htm: "POST", htu: url, accessToken: token });
    const answer = await post(strict, { authorization: `DPoP ${token}`, dpop: proof });
    expect(answer.status).toBe(200);
    expect(answer.nonce).toMatch(/^[0-9a-z]+\.[\w-]{22}$/);
    // A proof without the nonce: use_dpop_nonce, with one to retry with.
    const bare = new URL(url);
    const stale = await auth.session.buildProof({ htm: "POST", htu: bare, accessToken: token, nonce: "0.x" });
    const refused = await post(strict, { authorization: `DPoP ${token}`, dpop: stale });
    expect(refused.status).toBe(401);
    expect(refused.challenge).toContain('error="use_dpop_nonce"');
    expect(refused.nonce).toMatch(/^[0-9a-z]+\./);
  }, 60_000);
});
