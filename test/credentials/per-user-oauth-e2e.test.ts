/**
 * Per-user OAuth end to end, every part real and wired as a gateway wires them: users signed in
 * at one authorization server (the gateway's identity provider, `auth:`), a remote MCP server
 * behind a second one that checks its tokens, the hub's per-user connections with the vault and
 * `perUserSource`, the connect prompt, and the `/connect/<server>` pages on the HTTP front. An
 * SDK v2 client calls as its user, gets the URL elicitation, the user connects (the second
 * server's sign-in and consent walked over HTTP), and the call answers with the user's own
 * account; then two users' calls interleave through `/mcp` without a crossing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWith } from "../../src/assembly/verify-with.js";
import { gatewaySignIn } from "../../src/auth/gateway-sign-in.js";
import { parseConfig } from "../../src/config/parse-config.js";
import type { McplexConfig } from "../../src/config/types.js";
import { ConnectFlow } from "../../src/credentials/connect-flow.js";
import { ConnectLinks } from "../../src/credentials/connect-links.js";
import { ConnectSignIn } from "../../src/credentials/connect-sign-in.js";
import { ConnectSignal, connectWaiter } from "../../src/credentials/connect-signal.js";
import { credentialRouter } from "../../src/credentials/credential-router.js";
import { disconnect } from "../../src/credentials/disconnect.js";
import { FileCredentialVault } from "../../src/credentials/file-credential-vault.js";
import { perUserSource } from "../../src/credentials/per-user-source.js";
import { userKey } from "../../src/credentials/user-ref.js";
import { connectPages } from "../../src/fronts/connect-pages.js";
import { type HttpFront, startHttpFront } from "../../src/fronts/http-front.js";
import { Gateway } from "../../src/gateway/gateway.js";
import { Hub } from "../../src/hub/hub.js";
import { connectPrompt } from "../../src/interceptors/connect-prompt.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";
import { LinkBrowser } from "./support/link-browser.js";
import { startWhoamiServer, type WhoamiServer } from "./support/whoami-server.js";

const dir = mkdtempSync(join(tmpdir(), "mcplex-per-user-e2e-"));
let idp: AuthServer;
let upstreamAs: AuthServer;
let whoami: WhoamiServer;
let vault: FileCredentialVault;
let hub: Hub;
let gateway: Gateway;
let front: HttpFront;
let base = "";
let servers: McplexConfig["servers"] = [];
const tokens: Record<string, string> = {};

beforeAll(async () => {
  [idp, upstreamAs] = await Promise.all([startAuthServer(), startAuthServer()]);
  whoami = await startWhoamiServer(upstreamAs);
  const config = parseConfig(
    `servers:
  github:
    url: ${whoami.url}
    credentials: per-user
auth:
  issuers:
    - issuer: ${idp.issuer}
  scopes: ["mcp:tools"]
`,
    { source: "mcplex.yaml", env: {} },
  );
  servers = config.servers;
  vault = new FileCredentialVault({ env: { MCPLEX_HOME: dir } });
  const links = new ConnectLinks({ base: () => base });
  const connected = new ConnectSignal();
  hub = new Hub({
    config,
    vault,
    userCredentials: credentialRouter({ perUser: perUserSource({ vault, links }) }),
    connectUrl: (user, server) => links.connectUrl(user, server),
  });
  await hub.start();
  gateway = new Gateway(hub, {
    interceptors: [connectPrompt({ waitConnected: connectWaiter(links, connected, { vault }) })],
  });
  const authenticator = gatewaySignIn(config.auth!, {
    tokens: [],
    host: "127.0.0.1",
    onEvent: () => {},
  });
  front = await startHttpFront(gateway, {
    port: 0,
    authenticator,
    connect: connectPages({
      flow: new ConnectFlow({ vault, links, signal: connected }),
      links,
      // The browser signs in at the gateway's provider first, its token checked by the front's authenticator.
      signIn: new ConnectSignIn({ links, auth: config.auth!, verify: verifyWith(() => authenticator) }),
      server: (name) => servers.find((s) => s.name === name),
    }),
  });
  base = front.url.replace(/\/mcp$/, "");
  for (const user of ["alice", "bob"])
    tokens[user] = (await idp.signIn({ user, resource: front.url, scopes: ["mcp:tools"] })).accessToken;
}, 60_000);
afterAll(async () => {
  await front?.close();
  gateway?.close();
  await hub?.close();
  await whoami?.close();
  await idp?.close();
  await upstreamAs?.close();
  expect(idp?.serverErrors).toEqual([]);
  expect(upstreamAs?.serverErrors).toEqual([]);
  rmSync(dir, { recursive: true, force: true });
});

/** The user's browser at the link: signed in at the gateway's provider, then at the second server's, back. */
async function connectAt(url: string, user: string): Promise<string> {
  const browser = new LinkBrowser(
    new Map([
      [idp, user],
      [upstreamAs, user],
    ]),
  );
  const done = await browser.open(url);
  expect(done.signedInAt).toEqual([idp.issuer, upstreamAs.issuer]);
  expect(done.status).toBe(200);
  return done.text;
}

/** An SDK v2 client (2025-11-25 session) signed in as `user`, taking URL elicitation by connecting. */
async function clientOf(user: string): Promise<{ client: Client; asked: string[] }> {
  const client = new Client(
    { name: `e2e-${user}`, version: "1.0.0" },
    { versionNegotiation: { mode: "legacy" }, capabilities: { elicitation: { url: {} } } },
  );
  const asked: string[] = [];
  client.setRequestHandler("elicitation/create", async (request) => {
    const url = String((request.params as { url?: string }).url);
    asked.push(url);
    // A connect that fails ends the session, so the waiting call fails now, saying why, not at the timeout.
    connectAt(url, user).catch(async (error: unknown) => {
      console.error(`${user}'s connect failed:`, error);
      await client.close();
    });
    return { action: "accept" };
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(front.url), {
      requestInit: { headers: { authorization: `Bearer ${tokens[user]}` } },
    }),
  );
  return { client, asked };
}

const textOf = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]?.text;

describe("per-user OAuth through the gateway", () => {
  it("asks each user to connect on their first call, then calls with their own account; interleaved calls never cross", async () => {
    const alice = await clientOf("alice");
    const bob = await clientOf("bob");
    try {
      // The very first call of a per-user server no user has listed yet (its tool found by
      // opening the caller's connection) is asked by URL elicitation as any other, and goes on
      // once she connected.
      expect(textOf(await alice.client.callTool({ name: "github__whoami", arguments: {} }))).toBe("alice");
      expect(alice.asked).toHaveLength(1);
      expect(alice.asked[0]).toMatch(new RegExp(`^${base}/connect/github\\?ticket=`));
      // Bob's first call, the tools listed now, is asked the same way.
      expect(textOf(await bob.client.callTool({ name: "github__whoami", arguments: {} }))).toBe("bob");
      expect(bob.asked).toHaveLength(1);
      expect(bob.asked[0]).toMatch(new RegExp(`^${base}/connect/github\\?ticket=`));
      // The vault holds each under their own key (issuer + sub of their sign-in).
      expect(await vault.users()).toEqual([userKey(idp.issuer, "alice"), userKey(idp.issuer, "bob")].sort());

      const from = whoami.calls.length;
      const count = 200;
      const order = Array.from({ length: 2 * count }, (_, i) => (i % 2 === 0 ? "alice" : "bob"));
      // 32 calls in flight at a time, the two users' alternating.
      const answers: string[] = [];
      for (let at = 0; at < order.length; at += 32) {
        const batch = order.slice(at, at + 32);
        answers.push(
          ...(await Promise.all(
            batch.map(async (user) =>
              String(
                textOf(
                  await (user === "alice" ? alice : bob).client.callTool({
                    name: "github__whoami",
                    arguments: {},
                  }),
                ),
              ),
            ),
          )),
        );
      }
      expect(answers).toEqual(order);
      const served = whoami.calls.slice(from);
      expect(served).toHaveLength(2 * count);
      const byToken = new Map<string, Set<string>>();
      for (const call of served)
        byToken.set(call.token, (byToken.get(call.token) ?? new Set()).add(call.sub));
      for (const subs of byToken.values()) expect(subs.size).toBe(1);
      expect(alice.asked).toHaveLength(1);
    } finally {
      await alice.client.close();
      await bob.client.close();
    }
  });

  it("asks again after the user disconnects, and their connection is closed", async () => {
    const alice = await clientOf("alice");
    try {
      const key = userKey(idp.issuer, "alice");
      const done = await disconnect(key, "github", {
        vault,
        server: (name) => servers.find((s) => s.name === name),
        closeUser: (user, server) => hub.closeUser(user, server),
      });
      expect(done).toEqual([{ server: "github", revocation: "revoked" }]);
      expect(textOf(await alice.client.callTool({ name: "github__whoami", arguments: {} }))).toBe("alice");
      expect(alice.asked).toHaveLength(1);
    } finally {
      await alice.client.close();
    }
  });
});
