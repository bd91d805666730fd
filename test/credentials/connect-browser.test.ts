/**
 * The connect flow as a person lives it, in Chromium: an MCP client (SDK v2, 2025-11-25) calls a
 * per-user server's tool, gets the URL elicitation, the browser opens the link (mcplex's
 * `/connect/github`), signs in and consents at the real authorization server, comes back to
 * "Connected to github", and the call that asked completes with the user's own token (the SDK
 * server behind its own token check answers with the token's `sub`).
 *
 * The hub's per-user call path is another part's work: here the hub's dispatch of the tool is
 * stubbed with what it will do (the per-user source's plan, then the call with the user's OAuth).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McplexConfig, ServerConfig } from "../../src/config/types.js";
import { ConnectFlow } from "../../src/credentials/connect-flow.js";
import { ConnectLinks } from "../../src/credentials/connect-links.js";
import { ConnectSignal, connectWaiter } from "../../src/credentials/connect-signal.js";
import { FileCredentialVault } from "../../src/credentials/file-credential-vault.js";
import { perUserSource } from "../../src/credentials/per-user-source.js";
import type { UserRef } from "../../src/credentials/user-credentials.js";
import { connectPages } from "../../src/fronts/connect-pages.js";
import { type HttpFront, startHttpFront } from "../../src/fronts/http-front.js";
import { Gateway } from "../../src/gateway/gateway.js";
import { Hub } from "../../src/hub/hub.js";
import { connectPrompt } from "../../src/interceptors/connect-prompt.js";
import { LocalServer } from "../../src/upstream/local-server.js";
import { oauthFetch, ServerOAuthProvider } from "../../src/upstream/oauth.js";
import { remote } from "../support/config.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";
import { linkSignIn, userAt } from "./support/link-sign-in.js";
import { startWhoamiServer, type WhoamiServer } from "./support/whoami-server.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const dir = mkdtempSync(join(tmpdir(), "mcplex-connect-browser-"));
let alice: UserRef;
let as: AuthServer;
/** The gateway's own identity provider, where the connect page signs its browser in first. */
let idp: AuthServer;
let whoami: WhoamiServer;
let hub: Hub;
let gateway: Gateway;
let front: HttpFront;
let base = "";

beforeAll(async () => {
  as = await startAuthServer();
  idp = await startAuthServer();
  alice = userAt(idp, "alice");
  whoami = await startWhoamiServer(as);
  const github: ServerConfig = remote("github", whoami.url, "streamable-http", { credentials: "per-user" });
  const vault = new FileCredentialVault({ env: { MCPLEX_HOME: dir } });
  const links = new ConnectLinks({ base: () => base });
  const connected = new ConnectSignal();
  const source = perUserSource({ vault, links });
  // The catalog's entry for the tool; its calls are made below, as the user.
  const listed = new LocalServer("github", [{ name: "whoami", handler: async () => ({ content: [] }) }]);
  const config = {
    source: "test",
    format: "mcplex",
    profiles: {},
    tokens: [],
    secrets: [],
    servers: [
      {
        name: "github",
        transport: "local",
        server: listed,
        enabled: true,
        lazy: false,
        timeout: 10_000,
        startTimeout: 10_000,
        tools: {},
      },
    ],
  } as unknown as McplexConfig;
  hub = new Hub({ config });
  await hub.start();
  hub.use(
    () => async () => {
      const plan = await source.plan(alice, github);
      const provider = new ServerOAuthProvider(
        "github",
        { grant: "authorization_code", clientName: "mcplex", redirectUrl: "http://127.0.0.1:1/unused" },
        plan.oauth!,
      );
      const client = new Client({ name: "hub-as-alice", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(whoami.url), {
          fetch: oauthFetch(provider, new URL(whoami.url)),
        }),
      );
      try {
        return (await client.callTool({ name: "whoami", arguments: {} })) as Record<string, unknown>;
      } finally {
        await client.close();
      }
    },
    { at: "upstream" },
  );
  gateway = new Gateway(hub, {
    interceptors: [connectPrompt({ waitConnected: connectWaiter(links, connected) })],
  });
  front = await startHttpFront(gateway, {
    port: 0,
    connect: connectPages({
      flow: new ConnectFlow({ vault, links, signal: connected }),
      links,
      signIn: linkSignIn(links, idp),
      server: (name) => (name === "github" ? github : undefined),
    }),
  });
  base = front.url.replace(/\/mcp$/, "");
}, 60_000);
afterAll(async () => {
  await front?.close();
  gateway?.close();
  await hub?.close();
  await whoami?.close();
  await as?.close();
  await idp?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("connecting a per-user server in a browser", { timeout: 60_000 }, () => {
  it("Chromium opens the elicited link, signs in and consents, sees Connected, and the call completes as the user", async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    const client = new Client(
      { name: "connect-browser-test", version: "1.0.0" },
      { versionNegotiation: { mode: "legacy" }, capabilities: { elicitation: { url: {} } } },
    );
    try {
      const page = await browser.newPage();
      let browsing: Promise<string> | undefined;
      client.setRequestHandler("elicitation/create", async (request) => {
        const url = String((request.params as { url?: string }).url);
        // The client opens the link for the user and answers at once; the call waits for the connect.
        browsing = (async () => {
          await page.goto(url);
          // Signed in at the gateway's provider first (who opened the link), then at the server's.
          for (const provider of [idp, as]) {
            await page.waitForURL((at) => at.origin === new URL(provider.issuer).origin);
            await page.fill('input[name="login"]', "alice");
            await page.fill('input[name="password"]', "anything");
            await page.click('button:has-text("Sign in")');
            await page.click('button:has-text("Allow")');
          }
          await page.waitForURL((at) => at.pathname === "/connect/github/callback");
          return (await page.locator("body").textContent()) ?? "";
        })();
        return { action: "accept" };
      });
      await client.connect(new StreamableHTTPClientTransport(new URL(front.url)));
      const result = await client.callTool({ name: "github__whoami", arguments: {} });
      const said = await browsing;
      expect(said).toContain("Connected to github. You can return to your conversation.");
      expect(said).toContain("Signed in as alice.");
      expect(result.isError).not.toBe(true);
      expect((result.content as Array<{ text: string }>)[0]?.text).toBe("alice");
      expect(whoami.calls.map((c) => c.sub)).toEqual(["alice"]);
    } finally {
      await client.close();
      await browser.close();
    }
  });
});
