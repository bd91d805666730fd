/**
 * Per-user OAuth against real parts: the test authorization server (oidc-provider: dynamic
 * registration, PKCE, resource indicators, rotating refresh tokens, RFC 7009 revocation) in
 * front of an SDK v2 MCP server that checks its tokens and answers `whoami` with their `sub`.
 * Users connect through mcplex's `/connect/<server>` pages, served by the real HTTP front and
 * walked over plain HTTP (the provider's sign-in and consent pages posted as a user would);
 * their calls then go out with their own tokens, through the `UserCredentialSource` plan the
 * hub's connections use (`ServerOAuthProvider` + `oauthFetch` over the SDK client).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisCredentialVault } from "../../src/cluster/redis-credential-vault.js";
import { RedisLink } from "../../src/cluster/redis-link.js";
import { deriveKey } from "../../src/cluster/signed-ids.js";
import type { ServerConfig } from "../../src/config/types.js";
import { ConnectFlow } from "../../src/credentials/connect-flow.js";
import { ConnectLinks } from "../../src/credentials/connect-links.js";
import { ConnectSignal } from "../../src/credentials/connect-signal.js";
import { disconnect } from "../../src/credentials/disconnect.js";
import { FileCredentialVault } from "../../src/credentials/file-credential-vault.js";
import { perUserSource } from "../../src/credentials/per-user-source.js";
import type { CredentialVault, UserRef } from "../../src/credentials/user-credentials.js";
import { connectPages } from "../../src/fronts/connect-pages.js";
import { type HttpFront, startHttpFront } from "../../src/fronts/http-front.js";
import { Gateway } from "../../src/gateway/gateway.js";
import { Hub } from "../../src/hub/hub.js";
import { oauthFetch, ServerOAuthProvider } from "../../src/upstream/oauth.js";
import { configOf, remote, stdio } from "../support/config.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";
import { startRedis } from "../support/redis.js";
import { LinkBrowser } from "./support/link-browser.js";
import { linkSignIn, userAt } from "./support/link-sign-in.js";
import { startWhoamiServer, type WhoamiServer } from "./support/whoami-server.js";

const dir = mkdtempSync(join(tmpdir(), "mcplex-connect-"));
let as: AuthServer;
let whoami: WhoamiServer;
let hub: Hub;
let front: HttpFront;
let base = "";
let vault: FileCredentialVault;
let links: ConnectLinks;
const connected = new ConnectSignal();
let github: ServerConfig;
let notes: ServerConfig;
/** Every page body mcplex served in this file, to grep for tokens. */
const pages: string[] = [];

/** Users of the test's provider, where the connect page signs its browser in too. */
let alice: UserRef;
let bob: UserRef;

beforeAll(async () => {
  as = await startAuthServer({
    users: ["alice", "bob", "carol", "erin", "grace"].map((sub) => ({ sub, email: `${sub}@x`, groups: [] })),
  });
  alice = userAt(as, "alice");
  bob = userAt(as, "bob");
  whoami = await startWhoamiServer(as);
  github = remote("github", whoami.url, "streamable-http", { credentials: "per-user" });
  notes = stdio("notes", "node", ["notes.js"], {
    credentials: "per-user",
    env: { NOTES_KEY: "${user:NOTES_KEY}", REGION: "${user:REGION}", FIXED: "x" },
  } as Partial<ServerConfig>);
  const servers = new Map([github, notes].map((s) => [s.name, s]));
  vault = new FileCredentialVault({ env: { MCPLEX_HOME: dir } });
  links = new ConnectLinks({ base: () => base });
  const flow = new ConnectFlow({ vault, links, signal: connected });
  hub = new Hub({ config: configOf([]) });
  await hub.start();
  front = await startHttpFront(new Gateway(hub), {
    port: 0,
    connect: connectPages({
      flow,
      links,
      signIn: linkSignIn(links, as),
      server: (name) => servers.get(name),
    }),
  });
  base = front.url.replace(/\/mcp$/, "");
  // Refresh tokens are kept only when offline_access is granted; the SDK asks for it when the
  // authorization server offers it, and prompt=consent with it.
  as.setResource(whoami.url, { scopes: ["mcp:tools"] });
}, 60_000);
afterAll(async () => {
  await front?.close();
  await hub?.close();
  await whoami?.close();
  await as?.close();
  expect(as?.serverErrors).toEqual([]);
  rmSync(dir, { recursive: true, force: true });
});

async function page(url: string, init: RequestInit = {}): Promise<Response & { body_: string }> {
  const response = await fetch(url, { redirect: "manual", ...init });
  const text = await response.text();
  pages.push(text, response.headers.get("location") ?? "");
  return Object.assign(response, { body_: text });
}

/**
 * Opens the connect link as `user`'s browser: the page, the sign-in at the gateway's provider
 * (the same provider here), then the server's sign-in and consent, the callback.
 */
async function connectAt(url: string, user: string, decision: "allow" | "deny" = "allow") {
  const browser = new LinkBrowser(new Map([[as, user]]));
  const toServer = await browser.open(url, {
    stopAt: (to) => to.searchParams.get("redirect_uri")?.endsWith("/connect/github/callback") === true,
  });
  expect(toServer.status).toBe(302);
  const authorization = toServer.url;
  expect(authorization.origin).toBe(as.issuer);
  expect(authorization.searchParams.get("resource")).toBe(whoami.url);
  expect(authorization.searchParams.get("code_challenge_method")).toBe("S256");
  expect(authorization.searchParams.get("redirect_uri")).toBe(`${base}/connect/github/callback`);
  const back = await as.approve(authorization, { user, decision });
  const callback = `${base}/connect/github/callback?${back}`;
  const done = await page(callback, { headers: { cookie: browser.jar.header(new URL(callback)) } });
  return Object.assign(done, { callback, browser });
}

/** The link a call of `user` is answered with, from the source. */
async function linkFor(user: UserRef, server = github): Promise<string> {
  const error = await perUserSource({ vault, links })
    .plan(user, server)
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(error).toMatchObject({ code: "CONNECT_REQUIRED" });
  return (error as { url: string }).url;
}

/** Calls `whoami` as the hub's connection for `user` would: the plan's OAuth host, oauthFetch, the SDK client. */
async function callAs(user: UserRef, store: CredentialVault = vault): Promise<string> {
  const client = await connectAs(user, store);
  try {
    return await whoamiOf(client);
  } finally {
    await client.close();
  }
}

/** A connection to the server as `user`, as the hub's per-user connection makes it. */
async function connectAs(user: UserRef, store: CredentialVault = vault): Promise<Client> {
  const plan = await perUserSource({ vault: store, links }).plan(user, github);
  const provider = new ServerOAuthProvider(
    "github",
    { grant: "authorization_code", clientName: "mcplex", redirectUrl: "http://127.0.0.1:1/unused" },
    plan.oauth!,
  );
  const client = new Client({ name: "per-user-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(whoami.url), {
      fetch: oauthFetch(provider, new URL(whoami.url)),
    }),
  );
  return client;
}

async function whoamiOf(client: Client): Promise<string> {
  const result = await client.callTool({ name: "whoami", arguments: {} });
  return (result.content as Array<{ text: string }>)[0]!.text;
}

describe("per-user OAuth through /connect/<server>", () => {
  it("answers a user who has not connected with a link, and calls with each user's own token once connected", async () => {
    const url = await linkFor(alice);
    expect(url).toMatch(new RegExp(`^${base}/connect/github\\?ticket=[\\w-]+\\.[\\w-]+$`));
    const waiting = connected.wait(alice.key, "github");
    const done = await connectAt(url, "alice");
    expect(done.status).toBe(200);
    expect(done.body_).toContain("Connected to github. You can return to your conversation.");
    expect(done.headers.get("content-security-policy")).toContain("default-src 'none'");
    await waiting;

    await connectAt(await linkFor(bob), "bob");
    expect(await callAs(alice)).toBe("alice");
    expect(await callAs(bob)).toBe("bob");
    expect(await callAs(alice)).toBe("alice");
    const [a, b] = [await vault.get(alice.key, "github"), await vault.get(bob.key, "github")];
    expect(a?.oauth?.tokens?.access_token).toBeDefined();
    expect(a?.oauth?.tokens?.refresh_token).toBeDefined();
    expect(a?.oauth?.tokens?.access_token).not.toBe(b?.oauth?.tokens?.access_token);
    expect(
      whoami.calls.every((c) => c.token === (c.sub === "alice" ? a : b)?.oauth?.tokens?.access_token),
    ).toBe(true);
    // At rest the vault holds neither token.
    const file = readFileSync(vault.file, "utf8");
    expect(file).not.toContain(a!.oauth!.tokens!.access_token);
    expect(file).not.toContain(a!.oauth!.tokens!.refresh_token!);
  });

  it("refreshes a refused token once for many concurrent calls through three vault holders (a rotating refresh token spent once)", async () => {
    const before = await vault.get(alice.key, "github");
    whoami.refuseTokensSeen();
    const holders = [
      vault,
      new FileCredentialVault({ env: { MCPLEX_HOME: dir } }),
      new FileCredentialVault({ env: { MCPLEX_HOME: dir } }),
    ];
    const answers = await Promise.all(Array.from({ length: 9 }, (_, i) => callAs(alice, holders[i % 3]!)));
    expect(answers).toEqual(Array(9).fill("alice"));
    const after = await vault.get(alice.key, "github");
    expect(after?.oauth?.tokens?.refresh_token).not.toBe(before?.oauth?.tokens?.refresh_token);
    // One new token served every call after the refusals: had a replica spent the old refresh
    // token again, the provider would have revoked the grant (reuse detection) and calls failed.
    const last = whoami.calls.slice(-9);
    expect(new Set(last.map((c) => c.token))).toEqual(new Set([after?.oauth?.tokens?.access_token]));
  });

  it("spends a rotated refresh token once across three replicas sharing the vault in Redis", async () => {
    const redis = await startRedis();
    const linksToRedis = [0, 1, 2].map(() => new RedisLink(redis.url, () => {}));
    try {
      await Promise.all(linksToRedis.map((l) => l.connect()));
      const key = deriveKey("three-replicas-secret-0123456789abcdef", "credential-vault");
      const replicas = linksToRedis.map((l) => new RedisCredentialVault(l, key));
      // Alice connects again (through the page, as before), and her record is the cluster's (and
      // kept aside under another key, for the revocation test below).
      await connectAt(links.connectUrl(alice, "github"), "alice");
      const record = await vault.get(alice.key, "github");
      await vault.put("user-key-alice-2", "github", record!);
      await replicas[0]!.put(alice.key, "github", record!);
      expect(await callAs(alice, replicas[0]!)).toBe("alice");
      whoami.refuseTokensSeen();
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) => callAs(alice, replicas[i % 3]!)),
      );
      expect(answers).toEqual(Array(12).fill("alice"));
      const after = await replicas[1]!.get(alice.key, "github");
      expect(after?.oauth?.tokens?.refresh_token).not.toBe(record?.oauth?.tokens?.refresh_token);
      expect(new Set(whoami.calls.slice(-12).map((c) => c.token))).toEqual(
        new Set([after?.oauth?.tokens?.access_token]),
      );
      // The grant the replicas rotated is alice's from now on (the copy here was spent).
      await vault.put(alice.key, "github", after!);
    } finally {
      for (const l of linksToRedis) l.close();
      await redis.stop();
    }
  });

  it("never crosses two users' calls interleaved on their own connections, through a refresh", async () => {
    const [a, b] = [await connectAs(alice), await connectAs(bob)];
    try {
      const from = whoami.calls.length;
      const order = Array.from({ length: 200 }, (_, i) => (i % 3 === 0 ? "bob" : "alice"));
      const answers = await Promise.all(
        order.map(async (who, i) => {
          // Halfway, every token seen so far is refused: both users refresh, each their own.
          if (i === 100) whoami.refuseTokensSeen();
          return whoamiOf(who === "alice" ? a : b);
        }),
      );
      expect(answers).toEqual(order);
      const tokens = { alice: new Set<string>(), bob: new Set<string>() };
      for (const call of whoami.calls.slice(from)) tokens[call.sub as "alice" | "bob"].add(call.token);
      for (const token of tokens.alice) expect(tokens.bob.has(token)).toBe(false);
      expect(whoami.calls.length - from).toBe(200);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("sends a user whose grant was revoked at the provider to connect again, and drops the dead tokens", async () => {
    const grace = userAt(as, "grace");
    await connectAt(await linkFor(grace), "grace");
    expect(await callAs(grace)).toBe("grace");
    const record = await vault.get(grace.key, "github");
    // Revoked at the provider (the user removed the app there), and the access token refused.
    const revoked = await fetch(as.endpoints.revocation, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        token: record!.oauth!.tokens!.refresh_token!,
        client_id: record!.oauth!.client!.client_id,
      }),
    });
    expect(revoked.status).toBe(200);
    whoami.refuseTokensSeen();
    const client = await connectAs(grace).catch((e: unknown) => e);
    const error = client instanceof Client ? await whoamiOf(client).catch((e: unknown) => e) : client;
    if (client instanceof Client) await client.close();
    expect(error).toMatchObject({
      code: "CONNECT_REQUIRED",
      url: expect.stringContaining("/connect/github?ticket="),
    });
    expect((await vault.get(grace.key, "github"))?.oauth?.tokens).toBeUndefined();
    await linkFor(grace);
  });

  it("refuses a changed, expired or other server's ticket with a page saying to call the tool again", async () => {
    const dave: UserRef = { key: "user-key-dave", subject: "dave" };
    const ticket = new URL(await linkFor(dave)).searchParams.get("ticket")!;
    const changed = await page(`${base}/connect/github?ticket=${ticket.slice(0, -3)}AAA`);
    expect(changed.status).toBe(400);
    expect(changed.body_).toContain("this connect link is not valid");
    expect(changed.body_).toContain("call the tool again for a fresh link");
    const other = await page(`${base}/connect/notes?ticket=${ticket}`);
    expect(other.status).toBe(400);
    expect(other.body_).toContain("this connect link is for another server than notes");
    expect((await page(`${base}/connect/github`)).status).toBe(400);
    expect((await page(`${base}/connect/nowhere?ticket=${ticket}`)).status).toBe(404);
    // Ten minutes on, the same link is refused as expired; another gateway's links are not taken.
    const later = new ConnectLinks({
      base,
      secret: "a-secret-for-two-gateways-0123456789",
      now: () => Date.now() + 11 * 60_000,
    });
    const now = new ConnectLinks({ base, secret: "a-secret-for-two-gateways-0123456789" });
    const fresh = new URL(now.connectUrl(dave, "github")).searchParams.get("ticket");
    expect(now.check(fresh, "github")).toMatchObject({ user: dave.key, subject: "dave", server: "github" });
    expect(() => later.check(fresh, "github")).toThrow(/this connect link has expired; call the tool again/);
    expect(() => links.check(fresh, "github")).toThrow(/this connect link is not valid/);
    expect(await vault.servers(dave.key)).toEqual([]);
  });

  it("says what happened when the user refuses consent, and on a state that is not ours", async () => {
    const carol = userAt(as, "carol");
    const refused = await connectAt(await linkFor(carol), "carol", "deny");
    expect(refused.status).toBe(400);
    expect(refused.body_).toContain("github: access was not granted");
    expect(await vault.get(carol.key, "github")).toBeUndefined();
    // The same answer brought back twice: the code is spent, the page says so, and what the
    // first one stored stays (the provider revokes a reused code's tokens: its own choice).
    const erin = userAt(as, "erin");
    const done = await connectAt(await linkFor(erin), "erin");
    expect(done.status).toBe(200);
    const stored = await vault.get(erin.key, "github");
    const replayed = await page(done.callback, {
      headers: { cookie: done.browser.jar.header(new URL(done.callback)) },
    });
    expect(replayed.status).toBe(400);
    expect(replayed.body_).toContain("github: the authorization server did not accept the code");
    // From another browser (the answer passed on), refused before the code is even tried.
    const elsewhere = await page(done.callback);
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body_).toContain("another browser than the one that signed in");
    expect(await vault.get(erin.key, "github")).toEqual(stored);
    const forged = await page(`${base}/connect/github/callback?code=abc&state=forged`);
    expect(forged.status).toBe(400);
    expect(forged.body_).toContain("does not belong to a connect begun here");
  });

  it("stores a stdio server's ${user:NAME} values from a same-origin form, never showing them", async () => {
    const url = await linkFor(alice, notes);
    const browser = new LinkBrowser(new Map([[as, "alice"]]));
    const form = await browser.open(url);
    pages.push(form.text);
    expect(form.status).toBe(200);
    expect(form.text).toContain('<input type="password" name="NOTES_KEY"');
    expect(form.text).toContain('<input type="password" name="REGION"');
    expect(form.text).not.toContain('name="FIXED"');
    // The form carries a grant for this browser (sealed), not the link's ticket.
    expect(form.text).not.toContain(new URL(url).searchParams.get("ticket")!);
    const grant = /name="grant" value="([^"]+)"/.exec(form.text)![1]!;
    const body = new URLSearchParams({ grant, NOTES_KEY: "nk-secret-4711", REGION: "eu" });
    const cookie = browser.jar.header(new URL(`${base}/connect/notes`));
    const post = (origin?: string, from = cookie) =>
      page(`${base}/connect/notes`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          cookie: from,
          ...(origin ? { origin } : {}),
        },
        body,
      });
    // Sent from another browser (the page passed on): refused, nothing stored.
    const other = await post(base, "");
    expect(other.status).toBe(400);
    expect(other.body_).toContain("another browser than the one that signed in");
    expect((await post()).status).toBe(403);
    expect((await post("http://evil.example")).status).toBe(403);
    const saved = await post(base);
    expect(saved.status).toBe(200);
    expect(saved.body_).not.toContain("nk-secret-4711");
    expect(await perUserSource({ vault, links }).plan(alice, notes)).toEqual({
      values: { NOTES_KEY: "nk-secret-4711", REGION: "eu" },
    });
    // Bob has not set his: his call is sent to connect, never given Alice's.
    await linkFor(bob, notes);
  });

  it("disconnects: revokes at the authorization server (RFC 7009), deletes the record, closes the user's connections", async () => {
    const record = await vault.get(bob.key, "github");
    const refresh = record!.oauth!.tokens!.refresh_token!;
    const closed: Array<[string, string | undefined]> = [];
    const done = await disconnect(bob.key, "github", {
      vault,
      server: (name) => (name === "github" ? github : undefined),
      closeUser: (user, server) => {
        closed.push([user, server]);
      },
    });
    expect(done).toEqual([{ server: "github", revocation: "revoked" }]);
    expect(closed).toEqual([[bob.key, "github"]]);
    expect(await vault.get(bob.key, "github")).toBeUndefined();
    // The provider no longer knows the refresh token.
    const introspected = await fetch(as.endpoints.introspection, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from(`${as.resourceServerClient.clientId}:${as.resourceServerClient.clientSecret}`).toString("base64")}`,
      },
      body: new URLSearchParams({ token: refresh }),
    });
    expect(await introspected.json()).toEqual({ active: false });
    // The next call is sent to connect again.
    await linkFor(bob);
    // Disconnecting everything of a user deletes values-only records too.
    expect(await disconnect(alice.key, undefined, { vault, server: () => undefined })).toEqual(
      expect.arrayContaining([{ server: "notes", revocation: "none" }]),
    );
    expect(await vault.servers(alice.key)).toEqual([]);
  });

  it("deletes the record even when revocation fails, and says why without the token", async () => {
    const record = await vault.get("user-key-alice-2", "github");
    const tokens = record!.oauth!.tokens!;
    const done = await disconnect("user-key-alice-2", "github", {
      vault,
      server: () => github,
      fetch: async (input, init) =>
        String(input).endsWith("/token/revocation")
          ? new Response(JSON.stringify({ error: "temporarily_unavailable" }), { status: 503 })
          : fetch(input, init),
    });
    expect(done).toEqual([
      {
        server: "github",
        revocation: "failed",
        error: "the revocation endpoint answered 503 temporarily_unavailable for the refresh_token",
      },
    ]);
    expect(await vault.get("user-key-alice-2", "github")).toBeUndefined();
    pages.push(JSON.stringify(done));
    expect(JSON.stringify(done)).not.toContain(tokens.access_token);
  });

  it("shows no token in any page, redirect or disconnect report", async () => {
    const tokens = whoami.calls.map((c) => c.token);
    expect(tokens.length).toBeGreaterThan(5);
    const served = pages.join("\n");
    for (const token of tokens) expect(served).not.toContain(token);
    expect(served).not.toContain("nk-secret-4711");
  });
});
