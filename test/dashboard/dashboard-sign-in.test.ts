import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningGateway, serve } from "../../src/assembly/serve.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { Dashboard } from "../../src/dashboard/dashboard.js";
import type { FrontPageHost } from "../../src/fronts/front-page.js";
import { issuesOf } from "../support/config-errors.js";
import { COMMANDS, type RawResponse, rawHttp, yamlConfig } from "../support/gateway.js";
import { type AuthServer, type RegisteredClient, startAuthServer } from "../support/oidc-provider.js";

// The dashboard's HTTP side when the gateway has an `auth:` block, with a real authorization
// server (oidc-provider, test/support/oidc-provider.ts) issuing the tokens: what the page is
// told before it has a token, the challenge its API answers without one, and what a signed-in
// user may do with its actions. The page itself, signing in in Chromium, is in
// dashboard-sign-in-browser.test.ts.

/** A loopback redirect URI: the provider accepts it on any port (RFC 8252 §7.3, a native client). */
const REDIRECT = "http://127.0.0.1/dashboard";
const JSON_TYPE = { "content-type": "application/json" };

let as: AuthServer;
let client: RegisteredClient;
let running: RunningGateway;
let origin: string;

function config(issuer: string, clientId: string): string {
  return yamlConfig(
    { fx: COMMANDS.fixture, gh: COMMANDS.fixture },
    `profiles:
  engineering:
    servers: [fx, gh]
  sales:
    servers: [fx]
auth:
  issuers:
    - issuer: ${issuer}
  scopes: [mcp:tools]
  access:
    - when: { groups: [eng] }
      profile: engineering
      operator: true
    - when: { groups: [sales] }
      profile: sales
  dashboard:
    clientId: ${clientId}
`,
  );
}

beforeAll(async () => {
  as = await startAuthServer();
  client = await as.registerClient({ redirect_uris: [REDIRECT] });
  running = await serve({
    config: parseConfig(config(as.issuer, client.clientId), { source: "test.yaml", env: {} }),
    transport: "http",
    http: { host: "127.0.0.1", port: 0 },
    watch: false,
  });
  await running.started;
  origin = running.http!.url.replace(/\/mcp$/, "");
}, 60_000);
afterAll(async () => {
  await running?.close();
  await as?.close();
});

const signIn = async (user: string) =>
  (await as.signIn({ user, resource: origin, client, scopes: ["mcp:tools"] })).accessToken;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const act = (server: string, action: string, headers: Record<string, string>) =>
  rawHttp(`${origin}/dashboard/servers/${server}/${action}`, {
    method: "POST",
    headers: { ...JSON_TYPE, ...headers },
    body: {},
  });
const errorOf = (res: RawResponse) => (res.json as { error?: string }).error;

describe("the dashboard of a gateway with sign-in", { timeout: 60_000 }, () => {
  it("answers its data and actions 401 with the challenge that leads to the identity provider", async () => {
    const challenge = `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource", scope="mcp:tools"`;
    for (const res of [
      await rawHttp(`${origin}/dashboard/state`, { method: "GET" }),
      await rawHttp(`${origin}/dashboard/events`, { method: "GET" }),
      await act("fx", "restart", {}),
    ]) {
      expect(res.status).toBe(401);
      expect(res.headers["www-authenticate"]).toBe(challenge);
      expect(res.headers["set-cookie"]).toBeUndefined();
    }
    const metadata = await rawHttp(`${origin}/.well-known/oauth-protected-resource`, { method: "GET" });
    expect(metadata.json).toMatchObject({ resource: origin, authorization_servers: [as.issuer] });
    expect(running.hub.servers().find((s) => s.name === "fx")?.starts).toBe(1);
  });

  it("never takes a token from a cookie", async () => {
    const token = await signIn("alice");
    for (const cookie of [`authorization=Bearer ${token}`, `token=${token}; access_token=${token}`]) {
      const state = await rawHttp(`${origin}/dashboard/state`, { method: "GET", headers: { cookie } });
      expect(state.status).toBe(401);
      const action = await act("fx", "disable", { cookie });
      expect(action.status).toBe(401);
    }
    expect(running.hub.servers().find((s) => s.name === "fx")?.enabled).toBe(true);
  });

  it("tells the page, without a credential, which provider and client to sign in with", async () => {
    const settings = await rawHttp(`${origin}/dashboard/sign-in`, { method: "GET" });
    expect(settings.status).toBe(200);
    expect(settings.json).toEqual({ issuer: as.issuer, clientId: client.clientId });
    // Another site's page may not read it (nor anything else of the dashboard's).
    const foreign = await rawHttp(`${origin}/dashboard/sign-in`, {
      method: "GET",
      headers: { origin: "http://localhost:9" },
    });
    expect(foreign.status).toBe(403);
  });

  it("lets the page's scripts reach the identity provider, and nothing else beyond the gateway", async () => {
    const page = await rawHttp(`${origin}/dashboard`, { method: "GET" });
    expect(page.status).toBe(200);
    const policy = String(page.headers["content-security-policy"]);
    expect(policy).toContain(`connect-src 'self' ${as.issuer};`);
    expect(policy).toContain("script-src 'self';");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(page.headers["referrer-policy"]).toBe("no-referrer");
  });

  it("names the signed-in user in the state, and shows them their profile only", async () => {
    const alice = await rawHttp(`${origin}/dashboard/state`, {
      method: "GET",
      headers: bearer(await signIn("alice")),
    });
    expect(alice.status).toBe(200);
    const aliceState = alice.json as {
      gateway: Record<string, unknown>;
      servers: { name: string }[];
      tools: { name: string }[];
    };
    expect(aliceState.gateway).toMatchObject({
      profile: "engineering",
      user: { subject: "alice", issuer: as.issuer, operator: true },
    });
    expect(aliceState.servers.map((s) => s.name).sort()).toEqual(["fx", "gh"]);

    const bob = await rawHttp(`${origin}/dashboard/state`, {
      method: "GET",
      headers: bearer(await signIn("bob")),
    });
    const bobState = bob.json as typeof aliceState;
    expect(bobState.gateway).toMatchObject({
      profile: "sales",
      user: { subject: "bob", issuer: as.issuer, operator: false },
    });
    expect(bobState.servers.map((s) => s.name)).toEqual(["fx"]);
    expect(bobState.tools.every((t) => t.name.startsWith("fx__"))).toBe(true);
  });

  it("shows the cluster's replicas to an operator only, not to a signed-in user without operator rights", async () => {
    // The HTTP front's seam as a replica's front fills it (a real cluster needs Redis): the
    // dashboard over the running gateway, asked as each viewer.
    const host: FrontPageHost = {
      admit: async () => ({ operator: true }),
      checkPage: () => undefined,
      endpoints: () => ({ mcp: `${origin}/mcp` }),
      authenticated: () => true,
      cluster: () => ({ status: "ok", members: [{ id: "r1", advertise: "http://10.0.0.1:8420" }] }),
      mcp: true,
    };
    const dashboard = new Dashboard(running.gateway, host);
    try {
      expect(await dashboard.state()).toHaveProperty("cluster");
      const user = { key: "user:0:carol", via: "oauth", subject: "carol", operator: false } as const;
      expect(await dashboard.state(undefined, { operator: false, identity: user })).not.toHaveProperty(
        "cluster",
      );
    } finally {
      dashboard.close();
    }
  });

  it("lets a signed-in operator act on servers, and refuses anyone else 403, saying why", async () => {
    const before = running.hub.servers().find((s) => s.name === "fx")!;
    const bob = await act("fx", "restart", bearer(await signIn("bob")));
    expect(bob.status).toBe(403);
    expect(errorOf(bob)).toMatch(/^Forbidden: acting on servers is for operators/);
    expect(errorOf(bob)).toContain("operator: true");
    for (const action of ["disable", "enable", "start", "stop"])
      expect((await act("fx", action, bearer(await signIn("bob")))).status).toBe(403);
    expect(running.hub.servers().find((s) => s.name === "fx")).toMatchObject({
      enabled: true,
      state: "ready",
      starts: before.starts,
      pid: before.pid,
    });

    const alice = await act("fx", "restart", bearer(await signIn("alice")));
    expect(alice.status).toBe(200);
    expect((alice.json as { server: { state: string } }).server.state).toBe("ready");
  });
});

describe("the dashboard while the identity provider does not answer", { timeout: 60_000 }, () => {
  it("serves the page with the issuer's origin alone, and leaves the provider alone a while", async () => {
    // A provider that takes connections and never answers them.
    const asked: string[] = [];
    const silent = createServer((req) => asked.push(req.url ?? ""));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const issuer = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const gateway = await serve({
      config: parseConfig(config(issuer, "dashboard-client"), { source: "test.yaml", env: {} }),
      transport: "http",
      http: { host: "127.0.0.1", port: 0 },
      watch: false,
    });
    try {
      const page = `${gateway.http!.url.replace(/\/mcp$/, "")}/dashboard`;
      // Answered within rawHttp's 10 s: the metadata is waited for a few seconds, not for
      // every discovery URL's own timeout in turn.
      const first = await rawHttp(page, { method: "GET" });
      expect(first.status).toBe(200);
      expect(String(first.headers["content-security-policy"])).toContain(`connect-src 'self' ${issuer};`);
      expect(asked.length).toBeGreaterThan(0);
      const before = asked.length;
      const second = await rawHttp(page, { method: "GET" });
      expect(second.status).toBe(200);
      expect(asked.length).toBe(before);
    } finally {
      await gateway.close();
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe("auth.dashboard", () => {
  it("names each problem at its path with the fix", () => {
    const issues = issuesOf(
      `servers: {}\nauth:\n  issuers:\n    - issuer: https://login.example.com\n  dashboard:\n    issuer: https://other.example.com\n    clientId: ""\n    scopes: ["a b"]\n    secret: x\n`,
    );
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          path: "auth.dashboard.issuer",
          message: expect.stringContaining("is not one of auth.issuers (https://login.example.com)"),
        }),
        expect.objectContaining({ path: "auth.dashboard.clientId" }),
        expect.objectContaining({
          path: "auth.dashboard.scopes",
          message: expect.stringContaining("a scope is one word"),
        }),
        expect.objectContaining({
          path: "auth.dashboard.secret",
          message: expect.stringContaining('unknown key "secret"'),
        }),
      ]),
    );
  });
});
