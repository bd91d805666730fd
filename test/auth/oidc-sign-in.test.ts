/**
 * Sign-in end to end: mcplex served from a YAML config with an `auth:` block (as `mcplex serve`
 * reads one), a real authorization server (oidc-provider, test/support/oidc-provider.ts) as its
 * issuer, and the official SDK clients signing their users in through it: discovery from the
 * 401, dynamic registration, authorization code + PKCE, a token for mcplex's resource, tool
 * calls on every front; profiles by group, step-up for a missing scope, opaque tokens by
 * introspection, and the identity riding on the request.
 */
import {
  Client,
  type FetchLike,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { UnauthorizedError as UnauthorizedErrorV1 } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type RunningGateway, type ServeEvent, serve } from "../../src/assembly/serve.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { userKey } from "../../src/credentials/user-ref.js";
import type { Identity, Interceptor } from "../../src/hub/call-pipeline.js";
import { WebSocketClientTransport } from "../../src/upstream/websocket-transport.js";
import { COMMANDS, postRev2026, rawHttp, resultText, rev2026Request } from "../support/gateway.js";
import { type AuthServer, connectWithSignIn, startAuthServer } from "../support/oidc-provider.js";
import { openStream } from "../support/sse-stream.js";

/** mcplex's config: two fixture servers, a profile per group, `gh__*` needing `github:write`. */
function configText(as: AuthServer): string {
  const { clientId, clientSecret } = as.resourceServerClient;
  const fixture = `command: ${JSON.stringify(COMMANDS.fixture.command)}\n    args: ${JSON.stringify(COMMANDS.fixture.args)}`;
  return `serve:
  readyWait: 1m
servers:
  fx:
    ${fixture}
  gh:
    ${fixture}
profiles:
  engineering:
    servers: [fx, gh]
  sales:
    servers: [fx]
auth:
  issuers:
    - issuer: ${as.issuer}
      introspection:
        clientId: ${clientId}
        clientSecret: ${clientSecret}
  scopes: ["mcp:tools"]
  access:
    - when: { groups: [eng] }
      profile: engineering
    - when: { groups: [sales] }
      profile: sales
  require:
    - tools: ["gh__*"]
      scopes: ["github:write"]
`;
}

let as: AuthServer;
let running: RunningGateway;
let origin: string;
const events: ServeEvent[] = [];
/** The identity of every `tools/call` the hub saw, as its interceptors see it. */
const identities: Identity[] = [];
const seeIdentity: Interceptor = (next) => (request) => {
  if (request.method === "tools/call" && request.context.identity !== undefined)
    identities.push(request.context.identity);
  return next(request);
};

async function serveConfig(text: string, interceptors: Interceptor[] = []): Promise<RunningGateway> {
  const config = parseConfig(text, { source: "mcplex.yaml", env: {} });
  const gateway = await serve({
    config,
    transport: "http",
    http: { host: "127.0.0.1", port: 0 },
    watch: false,
    interceptors,
    onEvent: (event) => events.push(event),
  });
  await gateway.started;
  return gateway;
}

beforeAll(async () => {
  as = await startAuthServer({
    users: [
      { sub: "alice", email: "alice@example.com", groups: ["eng"] },
      { sub: "bob", email: "bob@example.com", groups: ["sales"] },
      { sub: "carol", email: "carol@example.com", groups: ["eng"] },
    ],
  });
  running = await serveConfig(configText(as), [seeIdentity]);
  origin = running.http!.url.replace(/\/mcp$/, "");
}, 60_000);
afterAll(async () => {
  await running?.close();
  // The provider answered throughout: mcplex reported no trouble with it, and it never failed.
  expect(events.filter((event) => event.type === "auth")).toEqual([]);
  expect(as?.serverErrors).toEqual([]);
  await as?.close();
});

/** One request a client sent, and the status it got. */
interface Sent {
  method: string;
  url: string;
  status: number;
  wwwAuthenticate: string | null;
}

/** The client's fetch (for its MCP requests and its OAuth flow alike), keeping what it sent. */
function recording(sent: Sent[]): FetchLike {
  return async (input, init) => {
    const response = await fetch(input, init);
    sent.push({
      method: init?.method ?? "GET",
      url: String(input instanceof Request ? input.url : input),
      status: response.status,
      wwwAuthenticate: response.headers.get("www-authenticate"),
    });
    return response;
  };
}

describe("the SDK clients sign in to mcplex through the authorization server", () => {
  it("SDK v2 on /mcp: 401, protected-resource then AS metadata, registration, code + PKCE, a token for mcplex, a tool call", async () => {
    const sent: Sent[] = [];
    const auth = as.clientProvider({ user: "alice" });
    const client = new Client({ name: "oidc-e2e", version: "1.0.0" });
    const transport = await connectWithSignIn(
      client,
      () =>
        new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
          authProvider: auth,
          fetch: recording(sent),
        }),
      auth,
    );
    try {
      expect(auth.redirects).toBe(1);
      // The order of the flow: a refusal naming the metadata, which names the issuer, whose
      // metadata names the registration and token endpoints.
      const challenge = sent.find((s) => s.status === 401);
      expect(challenge).toMatchObject({ url: `${origin}/mcp`, method: "POST" });
      expect(challenge?.wwwAuthenticate).toBe(
        `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`,
      );
      const urls = sent.map((s) => `${s.method} ${s.url.replace(/\?.*$/, "")} ${s.status}`);
      const at = (line: string) => {
        const index = urls.indexOf(line);
        expect(index, `${line} in ${urls.join("\n")}`).toBeGreaterThanOrEqual(0);
        return index;
      };
      const order = [
        at(`POST ${origin}/mcp 401`),
        at(`GET ${origin}/.well-known/oauth-protected-resource/mcp 200`),
        at(`GET ${as.issuer}/.well-known/oauth-authorization-server 200`),
        at(`POST ${as.endpoints.registration} 201`),
        at(`POST ${as.endpoints.token} 200`),
      ];
      expect([...order].sort((a, b) => a - b)).toEqual(order);

      const token = auth.accessToken!;
      expect(decodeJwt(token)).toMatchObject({
        iss: as.issuer,
        aud: `${origin}/mcp`,
        sub: "alice",
        groups: ["eng"],
        scope: "mcp:tools",
      });
      const echoed = await client.callTool({ name: "fx__echo", arguments: { message: "v2 /mcp" } });
      expect(resultText(echoed)).toBe("echo: v2 /mcp");
      expect(sent.at(-1)).toMatchObject({ url: `${origin}/mcp`, status: 200 });
    } finally {
      await transport.close();
      await client.close();
    }

    // The same sign-in on the legacy /sse front (the SDK's SSE transport, same provider) ...
    const sse = new Client({ name: "oidc-e2e-sse", version: "1.0.0" });
    await sse.connect(new SSEClientTransport(new URL(`${origin}/sse`), { authProvider: auth }));
    try {
      expect(resultText(await sse.callTool({ name: "fx__echo", arguments: { message: "sse" } }))).toBe(
        "echo: sse",
      );
    } finally {
      await sse.close();
    }
    // ... and on /ws, the token in the upgrade's Authorization header.
    const ws = new Client({ name: "oidc-e2e-ws", version: "1.0.0" });
    await ws.connect(
      new WebSocketClientTransport({
        url: running.http!.wsUrl,
        headers: { authorization: `Bearer ${auth.accessToken}` },
      }),
    );
    try {
      expect(resultText(await ws.callTool({ name: "fx__echo", arguments: { message: "ws" } }))).toBe(
        "echo: ws",
      );
    } finally {
      await ws.close();
    }
    expect(auth.redirects).toBe(1);
  });

  it("SDK v2 on /sse: the legacy transport runs the same flow from its own 401", async () => {
    const auth = as.clientProvider({ user: "alice" });
    const client = new Client({ name: "oidc-e2e-sse-flow", version: "1.0.0" });
    const transport = await connectWithSignIn(
      client,
      () => new SSEClientTransport(new URL(`${origin}/sse`), { authProvider: auth }),
      auth,
    );
    try {
      expect(auth.redirects).toBe(1);
      // The SDK asked for the resource the /sse metadata names.
      expect(decodeJwt(auth.accessToken!)).toMatchObject({ aud: `${origin}/sse`, sub: "alice" });
      expect(resultText(await client.callTool({ name: "fx__echo", arguments: { message: "s" } }))).toBe(
        "echo: s",
      );
    } finally {
      await transport.close();
      await client.close();
    }
  });

  it("SDK v1 on /mcp: the same flow, then a tool call", async () => {
    const auth = as.clientProvider({ user: "alice" });
    const client = new ClientV1({ name: "oidc-e2e-v1", version: "1.0.0" });
    const first = new StreamableHTTPClientTransportV1(new URL(`${origin}/mcp`), { authProvider: auth });
    const refused = await client.connect(first).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UnauthorizedErrorV1);
    await first.finishAuth(auth.takeCallback().get("code") ?? "");
    await client.connect(
      new StreamableHTTPClientTransportV1(new URL(`${origin}/mcp`), { authProvider: auth }),
    );
    try {
      expect(decodeJwt(auth.accessToken!)).toMatchObject({ aud: `${origin}/mcp`, sub: "alice" });
      const echoed = await client.callTool({ name: "fx__echo", arguments: { message: "v1" } });
      expect(resultText(echoed)).toBe("echo: v1");
    } finally {
      await client.close();
    }
  });
});

describe("access by identity", () => {
  it("gives bob (sales) only the sales profile's tools; a tool outside it answers like one that does not exist", async () => {
    const auth = as.clientProvider({ user: "bob" });
    const client = new Client({ name: "oidc-e2e-bob", version: "1.0.0" });
    const transport = await connectWithSignIn(
      client,
      () => new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { authProvider: auth }),
      auth,
    );
    // A wire error with the tool's name made neutral, to compare two names' answers.
    const neutral = (error: unknown, name: string) => {
      const { code, message, data } = error as { code?: number; message?: string; data?: unknown };
      return JSON.parse(JSON.stringify({ code, message, data }).replaceAll(name, "NAME")) as unknown;
    };
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("fx__echo");
      expect(names.filter((n) => !n.startsWith("fx__"))).toEqual([]);
      expect(resultText(await client.callTool({ name: "fx__echo", arguments: { message: "b" } }))).toBe(
        "echo: b",
      );
      const outside = await client
        .callTool({ name: "gh__echo", arguments: { message: "b" } })
        .catch((e: unknown) => e);
      const missing = await client
        .callTool({ name: "zz__echo", arguments: { message: "b" } })
        .catch((e: unknown) => e);
      expect(neutral(missing, "zz__echo")).toEqual({
        code: -32602,
        message: "Unknown tool: NAME",
        data: { name: "NAME" },
      });
      expect(neutral(outside, "gh__echo")).toEqual(neutral(missing, "zz__echo"));
      // Prompts alike: listed only from the profile's server, and another's is unknown.
      expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(["fx__greet"]);
      const prompt = (name: string) =>
        client.getPrompt({ name, arguments: { who: "b" } }).catch((e: unknown) => e);
      const unknownPrompt = neutral(await prompt("zz__greet"), "zz__greet");
      expect(unknownPrompt).toMatchObject({
        code: expect.any(Number),
        message: expect.stringContaining("NAME"),
      });
      expect(neutral(await prompt("gh__greet"), "gh__greet")).toEqual(unknownPrompt);
      // No sign-in was asked for on the way: gh__echo needs a scope, but bob cannot reach it.
      expect(auth.redirects).toBe(1);
    } finally {
      await transport.close();
      await client.close();
    }
    // On the wire (a 2026 POST): the same status, headers and body, name aside.
    const post = (name: string) =>
      postRev2026(`${origin}/mcp`, rev2026Request(1, "tools/call", { name, arguments: { message: "x" } }), {
        authorization: `Bearer ${auth.accessToken}`,
      });
    const [outside, missing] = await Promise.all([post("gh__echo"), post("zz__echo")]);
    expect(missing.status).toBe(200);
    expect(outside.status).toBe(200);
    expect(outside.headers["www-authenticate"]).toBeUndefined();
    expect(outside.body.replaceAll("gh__echo", "NAME")).toBe(missing.body.replaceAll("zz__echo", "NAME"));
  });

  it("keeps a 2025 session and an /sse stream to the user who opened them: another user of the same profile cannot use their ids", async () => {
    const resource = `${origin}/mcp`;
    const [alice, carol] = await Promise.all([
      as.signIn({ user: "alice", resource, scopes: ["mcp:tools", "github:write"] }),
      as.signIn({ user: "carol", resource }),
    ]);
    const headers = (token: string, session?: string) => ({
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(session === undefined ? {} : { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" }),
    });
    const init = await rawHttp(`${origin}/mcp`, {
      headers: headers(alice.accessToken),
      body: {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      },
    });
    expect(init.status).toBe(200);
    const session = String(init.headers["mcp-session-id"]);
    // gh__echo needs github:write, which alice's token has and carol's (eng too) has not.
    const call = (token: string) =>
      rawHttp(`${origin}/mcp`, {
        headers: headers(token, session),
        body: {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "gh__echo", arguments: { message: "x" } },
        },
      });
    const own = await call(alice.accessToken);
    expect(own.status).toBe(200);
    expect(own.body).toContain("echo: x");

    const borrowed = await call(carol.accessToken);
    expect(borrowed.status).toBe(403);
    expect(borrowed.body).toContain("this session belongs to another user");
    for (const method of ["GET", "DELETE"]) {
      const answer = await rawHttp(`${origin}/mcp`, {
        method,
        headers: headers(carol.accessToken, session),
        timeoutMs: 5000,
      });
      expect(answer.status, method).toBe(404);
    }
    // Still alice's, and still open.
    expect((await call(alice.accessToken)).body).toContain("echo: x");

    // The same on /sse: alice's stream, carol's message to it.
    const stream = await openStream(`${origin}/sse`, { authorization: `Bearer ${alice.accessToken}` });
    try {
      expect(stream.status).toBe(200);
      const endpoint = new URL(await stream.endpoint, `${origin}/sse`).href;
      const message = (token: string) =>
        rawHttp(endpoint, {
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
        });
      const intruding = await message(carol.accessToken);
      expect(intruding.status).toBe(403);
      expect(intruding.body).toContain("this session belongs to another user");
      expect((await message(alice.accessToken)).status).toBe(202);
    } finally {
      stream.close();
    }
  });
});

describe("scopes, opaque tokens and the identity on the request", () => {
  it.each([
    ["a 2025 session", "legacy"],
    ["2026 requests", "auto"],
  ] as const)(
    "steps up on %s: a tool under auth.require answers 403 insufficient_scope; the SDK signs in again with the scope and the call passes",
    async (_, mode) => {
      const sent: Sent[] = [];
      const auth = as.clientProvider({ user: "alice" });
      const client = new Client(
        { name: "oidc-e2e-step-up", version: "1.0.0" },
        { versionNegotiation: { mode } },
      );
      const transport = await connectWithSignIn(
        client,
        () =>
          new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
            authProvider: auth,
            fetch: recording(sent),
          }),
        auth,
      );
      try {
        expect(decodeJwt(auth.accessToken!).scope).toBe("mcp:tools");
        // A 2025 session has an id; 2026 requests stand alone.
        expect(transport.sessionId === undefined).toBe(mode === "auto");
        // Within alice's profile, so listed; calling it needs github:write.
        expect((await client.listTools()).tools.map((t) => t.name)).toContain("gh__echo");
        const refused = await client
          .callTool({ name: "gh__echo", arguments: { message: "up" } })
          .catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(UnauthorizedError);
        expect(sent.filter((s) => s.status === 403)).toEqual([
          {
            method: "POST",
            url: `${origin}/mcp`,
            status: 403,
            wwwAuthenticate: `Bearer error="insufficient_scope", scope="mcp:tools github:write", resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
          },
        ]);
        // The SDK sent alice to the authorization server again, asking for both scopes.
        expect(auth.redirects).toBe(2);
        await transport.finishAuth(auth.takeCallback());
        expect(decodeJwt(auth.accessToken!)).toMatchObject({
          aud: `${origin}/mcp`,
          scope: "mcp:tools github:write",
        });
        const passed = await client.callTool({ name: "gh__echo", arguments: { message: "up" } });
        expect(resultText(passed)).toBe("echo: up");
      } finally {
        await transport.close();
        await client.close();
      }
    },
  );

  it("steps up on /sse: a token with more scopes counts from the stream's next message", async () => {
    const auth = as.clientProvider({ user: "alice" });
    const client = new Client({ name: "oidc-e2e-sse-step-up", version: "1.0.0" });
    const transport = await connectWithSignIn(
      client,
      () => new SSEClientTransport(new URL(`${origin}/sse`), { authProvider: auth }),
      auth,
    );
    try {
      // On a stream the refusal is a JSON-RPC error (the POST was accepted before the call ran).
      const refused = await client
        .callTool({ name: "gh__echo", arguments: { message: "sse up" } })
        .catch((e: unknown) => e);
      expect(refused).toMatchObject({
        code: -32003,
        data: { reason: "insufficient_scope", scope: "mcp:tools github:write" },
      });
      // The SDK's SSE transport does not step up by itself: alice signs in again with both
      // scopes, and the transport sends the new token with its next message.
      const again = await as.signIn({
        user: "alice",
        resource: `${origin}/sse`,
        scopes: ["mcp:tools", "github:write"],
      });
      auth.saveTokens({ access_token: again.accessToken, token_type: "Bearer", scope: again.scope });
      const passed = await client.callTool({ name: "gh__echo", arguments: { message: "sse up" } });
      expect(resultText(passed)).toBe("echo: sse up");
    } finally {
      await transport.close();
      await client.close();
    }
  });

  it("checks opaque tokens by introspection, keeps the answer, and sees a revocation once the kept answer is gone", async () => {
    // The gateway's base URL as the resource indicator: a token for the whole gateway, opaque.
    as.setResource(origin, { format: "opaque" });
    const [revoked, kept] = await Promise.all([
      as.signIn({ user: "bob", resource: origin }),
      as.signIn({ user: "bob", resource: origin }),
    ]);
    expect(revoked.accessToken.split(".")).toHaveLength(1);
    const call = (token: string) =>
      postRev2026(
        `${origin}/mcp`,
        rev2026Request(1, "tools/call", { name: "fx__echo", arguments: { message: "opaque" } }),
        { authorization: `Bearer ${token}` },
      );
    const echoed = (answer: Awaited<ReturnType<typeof call>>) =>
      answer.status === 200 ? resultText((answer.json as { result?: unknown }).result) : answer.status;

    as.resetCounts();
    expect(echoed(await call(revoked.accessToken))).toBe("echo: opaque");
    expect(echoed(await call(kept.accessToken))).toBe("echo: opaque");
    expect(as.introspections).toBe(2);
    expect(echoed(await call(revoked.accessToken))).toBe("echo: opaque");
    expect(as.introspections).toBe(2);

    const revocation = await fetch(as.endpoints.revocation, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        token: revoked.accessToken,
        client_id: revoked.client.clientId,
      }).toString(),
    });
    expect(revocation.status).toBe(200);
    // Kept by its hash: the revocation is not seen yet (the answer is kept at most five
    // minutes, or until the token's exp).
    expect(echoed(await call(revoked.accessToken))).toBe("echo: opaque");
    expect(as.introspections).toBe(2);

    // Five minutes later by mcplex's clock (the token itself lives an hour): asked again.
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    try {
      vi.setSystemTime(Date.now() + 5 * 60_000 + 1000);
      const refused = await call(revoked.accessToken);
      expect(refused.status).toBe(401);
      expect(refused.headers["www-authenticate"]).toContain('error="invalid_token"');
      expect(refused.body).toContain("not active (expired, revoked or unknown to the issuer)");
      expect(echoed(await call(kept.accessToken))).toBe("echo: opaque");
      expect(as.introspections).toBe(4);
    } finally {
      vi.useRealTimers();
    }
  });

  it("puts the signed-in user on the request: an interceptor sees via, subject, issuer, client, scopes, groups, email and profile", async () => {
    const signedIn = await as.signIn({ user: "alice", resource: `${origin}/mcp` });
    const answer = await postRev2026(
      `${origin}/mcp`,
      rev2026Request(1, "tools/call", { name: "fx__echo", arguments: { message: "who" } }),
      { authorization: `Bearer ${signedIn.accessToken}` },
    );
    expect(answer.status).toBe(200);
    expect(identities.at(-1)).toEqual({
      // The principal: the issuer with the subject, keyed as the credential vault keys users.
      key: `user:${userKey(as.issuer, "alice")}`,
      via: "oauth",
      subject: "alice",
      issuer: as.issuer,
      client: signedIn.client.clientId,
      scopes: ["mcp:tools"],
      // What policies read of the sign-in (`caller.groups`, `caller.email`).
      groups: ["eng"],
      email: "alice@example.com",
      emailVerified: false,
      profile: "engineering",
      operator: false,
      // The token's exp, which ends the connections it opens.
      expiresAt: (decodeJwt(signedIn.accessToken).exp as number) * 1000,
    });
  });
});
