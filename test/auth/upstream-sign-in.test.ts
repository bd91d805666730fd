/**
 * Our two halves agree: mcplex A serves with `auth:` (the real authorization server of
 * test/support/oidc-provider.ts as its issuer), and mcplex B, itself requiring sign-in, has A as
 * a remote server with `oauth:`. B's own OAuth client finds the provider from A's 401,
 * registers, runs code + PKCE (the provider's pages walked for the user by `authorizer`), and
 * calls A's tools with a token for A's resource. What B sends to A is read off the wire (the
 * `undici:request:create` diagnostics channel of this process's fetch): only B's own token,
 * never the token B's client signed in to B with.
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningGateway, type ServeOptions, serve } from "../../src/assembly/serve.js";
import { parseConfig } from "../../src/config/parse-config.js";
import type { Identity, Interceptor } from "../../src/hub/call-pipeline.js";
import { memoryOAuthStore } from "../../src/upstream/oauth.js";
import { COMMANDS, postRev2026, resultText, rev2026Request, yamlConfig } from "../support/gateway.js";
import {
  type AuthServer,
  connectWithSignIn,
  startAuthServer,
  TEST_REDIRECT_URI,
} from "../support/oidc-provider.js";

/** A request this process's fetch sent: where, and its Authorization header. */
interface Outgoing {
  origin: string;
  path: string;
  authorization: string | undefined;
}

/** Records every request this process's fetch (undici) sends, as it is created. */
function tapFetch(): { sent: Outgoing[]; stop(): void } {
  const sent: Outgoing[] = [];
  const onCreate = (message: unknown) => {
    const { request } = message as {
      request: { origin: string; path: string; headers: string[] | string };
    };
    sent.push({
      origin: String(request.origin),
      path: request.path,
      authorization: headerIn(request.headers, "authorization"),
    });
  };
  subscribe("undici:request:create", onCreate);
  return { sent, stop: () => unsubscribe("undici:request:create", onCreate) };
}

/** A header's value in undici's request headers (a flat name/value list, or raw lines). */
function headerIn(headers: string[] | string, name: string): string | undefined {
  if (typeof headers === "string") {
    const line = headers.split("\r\n").find((l) => l.toLowerCase().startsWith(`${name}:`));
    return line?.slice(name.length + 1).trim();
  }
  for (let i = 0; i + 1 < headers.length; i += 2)
    if (headers[i]!.toLowerCase() === name) return headers[i + 1];
  return undefined;
}

const authBlock = (as: AuthServer) => `auth:
  issuers:
    - issuer: ${as.issuer}
  scopes: ["mcp:tools"]
`;

async function serveYaml(text: string, options: Partial<ServeOptions> = {}): Promise<RunningGateway> {
  const running = await serve({
    config: parseConfig(text, { source: "mcplex.yaml", env: {} }),
    transport: "http",
    http: { host: "127.0.0.1", port: 0 },
    watch: false,
    ...options,
  });
  await running.started;
  return running;
}

let as: AuthServer;
let a: RunningGateway;
let b: RunningGateway;
let aOrigin: string;
let bOrigin: string;
const tap = tapFetch();
/** Who A saw calling its tools. */
const seenByA: Identity[] = [];
const seeIdentity: Interceptor = (next) => (request) => {
  if (request.method === "tools/call" && request.context.identity !== undefined)
    seenByA.push(request.context.identity);
  return next(request);
};

beforeAll(async () => {
  as = await startAuthServer();
  // A: the fixture server, for signed-in members of eng only.
  a = await serveYaml(
    yamlConfig({ fx: COMMANDS.fixture }, `${authBlock(as)}  access:\n    - when: { groups: [eng] }\n`),
    { interceptors: [seeIdentity] },
  );
  aOrigin = a.http!.url.replace(/\/mcp$/, "");
  // B: A as a remote server that B signs in to (as alice), and sign-in for B's own clients.
  const bConfig = `serve:
  readyWait: 1m
servers:
  a:
    url: ${aOrigin}/mcp
    oauth:
      redirectUrl: ${TEST_REDIRECT_URI}
      clientName: mcplex B
${authBlock(as)}`;
  b = await serveYaml(bConfig, {
    oauth: { store: memoryOAuthStore(), authorize: as.authorizer("alice") },
  });
  bOrigin = b.http!.url.replace(/\/mcp$/, "");
}, 60_000);
afterAll(async () => {
  tap.stop();
  await b?.close();
  await a?.close();
  expect(as?.serverErrors).toEqual([]);
  await as?.close();
});

describe("mcplex's upstream OAuth client signs in to another mcplex", () => {
  it("B finds the provider from A's 401, registers, runs code + PKCE, and gets a token for A", () => {
    expect(b.hub.servers().map((s) => [s.name, s.state])).toEqual([["a", "ready"]]);
    const toA = tap.sent.filter((r) => r.origin === aOrigin);
    const toProvider = tap.sent.filter((r) => r.origin === as.issuer).map((r) => r.path.split("?")[0]);
    // Its first request, without a token, got the challenge; then the metadata A names.
    expect(toA[0]).toMatchObject({ path: "/mcp", authorization: undefined });
    expect(toA.map((r) => r.path)).toContain("/.well-known/oauth-protected-resource/mcp");
    expect(toProvider).toEqual(
      expect.arrayContaining(["/.well-known/oauth-authorization-server", "/reg", "/token"]),
    );
    const tokens = toA.flatMap((r) => (r.authorization === undefined ? [] : [r.authorization]));
    expect(tokens.length).toBeGreaterThan(0);
    expect(decodeJwt(tokens[0]!.replace(/^Bearer /, ""))).toMatchObject({
      iss: as.issuer,
      aud: `${aOrigin}/mcp`,
      sub: "alice",
      scope: "mcp:tools",
    });
  });

  it("B's signed-in client calls A's tool through B; A sees B's sign-in, and B's client's token never reaches A", async () => {
    const auth = as.clientProvider({ user: "bob" });
    const client = new Client({ name: "upstream-e2e", version: "1.0.0" });
    const transport = await connectWithSignIn(
      client,
      () => new StreamableHTTPClientTransport(new URL(`${bOrigin}/mcp`), { authProvider: auth }),
      auth,
    );
    const clientToken = auth.accessToken!;
    expect(decodeJwt(clientToken)).toMatchObject({ aud: `${bOrigin}/mcp`, sub: "bob" });
    const seen = seenByA.length;
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("a__fx__echo");
      const echoed = await client.callTool({ name: "a__fx__echo", arguments: { message: "via B" } });
      expect(resultText(echoed)).toBe("echo: via B");
    } finally {
      await transport.close();
      await client.close();
    }

    // A was called by alice, through the client B registered at the provider: not by bob.
    expect(seenByA.slice(seen)).toEqual([
      expect.objectContaining({ via: "oauth", subject: "alice", issuer: as.issuer, scopes: ["mcp:tools"] }),
    ]);
    const bClient = seenByA.at(-1)!.client;
    expect(bClient).toBeDefined();
    expect(bClient).not.toBe(decodeJwt(clientToken).client_id);

    // On the wire: every request B sent to A carried a token for A, none bob's token for B.
    const toA = tap.sent.filter((r) => r.origin === aOrigin && r.authorization !== undefined);
    expect(toA.length).toBeGreaterThan(0);
    for (const request of toA) {
      expect(request.authorization).not.toContain(clientToken);
      expect(decodeJwt(request.authorization!.replace(/^Bearer /, ""))).toMatchObject({
        aud: `${aOrigin}/mcp`,
        sub: "alice",
      });
    }
    // Had B passed it on, A would have refused it: it names B, not A.
    const refused = await postRev2026(
      `${aOrigin}/mcp`,
      rev2026Request(1, "tools/call", { name: "fx__echo", arguments: { message: "x" } }),
      { authorization: `Bearer ${clientToken}` },
    );
    expect(refused.status).toBe(401);
    expect(refused.body).toContain("not for this resource");
  });
});
