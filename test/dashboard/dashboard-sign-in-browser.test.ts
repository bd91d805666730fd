/// <reference lib="dom" />
import { type Browser, chromium, type Page, type Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningGateway, serve } from "../../src/assembly/serve.js";
import { parseConfig } from "../../src/config/parse-config.js";
import type { Identity } from "../../src/fronts/authenticator.js";
import type { Interceptor } from "../../src/hub/call-pipeline.js";
import { COMMANDS, yamlConfig } from "../support/gateway.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";

// The dashboard page signing its user in, in a real browser (Debian's Chromium), at a real
// authorization server (oidc-provider, test/support/oidc-provider.ts): the page finds the
// provider from the gateway's challenge, sends the user to its login and consent pages, takes
// the code back and exchanges it, and from then on acts as that user, whose profile and
// operator rights the gateway's auth.access decides.

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/** A loopback redirect URI: the provider accepts it on any port (RFC 8252 §7.3, a native client). */
const REDIRECT = "http://127.0.0.1/dashboard";
/** The gateway's requests that carry data or act: the page's own files are not among them. */
const API = /\/(dashboard\/(state|events|sign-in|servers\/.*)|mcp|\.well-known\/.*)$/;

function config(issuer: string, dashboard: string): string {
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
${dashboard}`,
  );
}

async function serveWith(text: string): Promise<{ running: RunningGateway; origin: string }> {
  const running = await serve({
    config: parseConfig(text, { source: "test.yaml", env: {} }),
    transport: "http",
    http: { host: "127.0.0.1", port: 0 },
    watch: false,
  });
  await running.started;
  return { running, origin: running.http!.url.replace(/\/mcp$/, "") };
}

/** Fills the test provider's login page as `user`, and its consent page when it comes. */
async function signInAtProvider(page: Page, as: AuthServer, user: string): Promise<void> {
  await page.waitForURL((url) => url.href.startsWith(`${as.issuer}/interaction/`));
  await page.fill('input[name="login"]', user);
  await page.fill('input[name="password"]', "anything");
  await page.click('button:has-text("Sign in")');
  // The consent page comes for a grant the user has not given yet; otherwise the page is back.
  const consent = page.locator('form[data-prompt="consent"] button');
  await Promise.race([
    consent.waitFor().catch(() => {}),
    page.waitForURL((url) => !url.href.startsWith(as.issuer)).catch(() => {}),
  ]);
  if (page.url().startsWith(as.issuer)) await consent.click();
}

let as: AuthServer;
let browser: Browser;
beforeAll(async () => {
  [as, browser] = await Promise.all([
    startAuthServer({
      users: [
        { sub: "alice", email: "alice@example.com", groups: ["eng"] },
        { sub: "bob", email: "bob@example.com", groups: ["sales"] },
        { sub: "carol", email: "carol@example.com", groups: ["guests"] },
      ],
    }),
    chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] }),
  ]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  expect(as?.serverErrors).toEqual([]);
  await as?.close();
});

describe("the dashboard signing in with a client configured for it", { timeout: 90_000 }, () => {
  let running: RunningGateway;
  let origin: string;
  let page: Page;
  const errors: string[] = [];
  /** Who the gateway's pipeline saw make each tools/call. */
  const callers: Array<{ tool: unknown; identity: Identity | undefined }> = [];
  /** The requests the page sent to the gateway's data and actions, with all their headers. */
  const apiRequests: Array<{ url: string; headers: Record<string, string> }> = [];
  /** The cookies the browser sent with the page's own files. */
  const pageCookies: string[] = [];
  const setCookies: string[] = [];

  const seeCalls: Interceptor = (next) => async (request) => {
    if (request.method === "tools/call")
      callers.push({ tool: request.params.name, identity: request.context.identity });
    return next(request);
  };

  beforeAll(async () => {
    const client = await as.registerClient({ redirect_uris: [REDIRECT] });
    ({ running, origin } = await serveWith(
      config(as.issuer, `  dashboard:\n    clientId: ${client.clientId}\n`),
    ));
    running.gateway.use(seeCalls);
    as.setResource(origin, { scopes: ["mcp:tools"] });
    page = await browser.newPage();
    page.on("pageerror", (error) => errors.push(error.message));
    const gateway = (request: Request) => request.url().startsWith(`${origin}/`);
    page.on("request", (request) => {
      if (!gateway(request)) return;
      const api = API.test(new URL(request.url()).pathname);
      void request.allHeaders().then((headers) => {
        if (api) apiRequests.push({ url: request.url(), headers });
        else if (headers.cookie !== undefined) pageCookies.push(headers.cookie);
      });
    });
    // A cookie of the gateway's origin (another application on that host, say), which the
    // browser sends wherever it may: the page's data requests must not carry it.
    await page
      .context()
      .addCookies([{ name: "planted", value: "not-a-credential", url: origin, httpOnly: true }]);
    page.on("response", (response) => {
      if (gateway(response.request()))
        void response.headerValue("set-cookie").then((value) => value !== null && setCookies.push(value));
    });
  }, 60_000);
  afterAll(async () => {
    await page?.close();
    await running?.close();
  });

  const tab = (name: string) => page.locator(`#tabs button[data-tab="${name}"]`).click();
  const callEcho = async (tool: string, message: string) => {
    await tab("playground");
    await page.locator(`#pg-tool option[value="${tool}"]`).waitFor({ state: "attached" });
    await page.locator("#pg-tool").selectOption(tool);
    await page.locator('#pg-form input[name="message"]').fill(message);
    await page.locator("#pg-call").click();
    await page.locator("#pg-result .result").waitFor();
    const text = await page.locator("#pg-result").textContent();
    await tab("overview");
    return text;
  };

  it("sends the user to the provider's login, and back signed in, with their profile's servers and tools", async () => {
    await page.goto(`${origin}/dashboard`);
    await signInAtProvider(page, as, "alice");
    await page.waitForURL(`${origin}/dashboard`);
    await page.locator("#user-name").filter({ hasText: "alice@example.com" }).waitFor();
    expect(await page.locator("#user-role").textContent()).toBe("(operator)");
    expect(await page.locator("#identity").textContent()).toContain("profile engineering");
    await page.locator('#servers tr[data-server="gh"] .badge.ready').waitFor();
    await page.locator('#tools tr[data-tool="gh__echo"]').waitFor();
    // The code and state left the address bar (and the history) as soon as the page read them.
    expect(page.url()).toBe(`${origin}/dashboard`);
    expect(errors).toEqual([]);
  });

  it("keeps the access token in memory only: no storage holds it, no cookie is set or sent", async () => {
    const sent = apiRequests.find((r) => r.url === `${origin}/dashboard/state` && r.headers.authorization);
    const token = sent?.headers.authorization?.replace(/^Bearer /, "");
    expect(token).toMatch(/^ey[\w-]+\.[\w-]+\.[\w-]+$/);
    const stored = await page.evaluate(() => {
      const all = (storage: Storage) =>
        Array.from(
          { length: storage.length },
          (_, i) => `${storage.key(i)}=${storage.getItem(storage.key(i)!)}`,
        );
      return { local: all(localStorage), session: all(sessionStorage), cookie: document.cookie };
    });
    expect(stored.local.join("\n")).not.toContain(token!);
    expect(stored.session.join("\n")).not.toContain(token!);
    // Nor the round trip's secrets: they are deleted once the page is back.
    expect(stored.session.filter((entry) => entry.startsWith("mcplex.dashboard.sign-in"))).toEqual([]);
    // The gateway set none (the planted one is httpOnly, out of the page's reach).
    expect(stored.cookie).toBe("");
    expect(setCookies).toEqual([]);
    // The browser sends the planted cookie with the page's own files, and the page sends it
    // with none of its data requests and actions: only the bearer token.
    expect(pageCookies.some((cookie) => cookie.includes("planted=not-a-credential"))).toBe(true);
    expect(apiRequests.length).toBeGreaterThan(0);
    expect(apiRequests.filter((r) => r.headers.cookie !== undefined).map((r) => r.url)).toEqual([]);
  });

  it("calls a tool as the signed-in user", async () => {
    expect(await callEcho("gh__echo", "from alice")).toContain("echo: from alice");
    expect(callers.at(-1)).toMatchObject({
      tool: "gh__echo",
      identity: { via: "oauth", subject: "alice", issuer: as.issuer, profile: "engineering", operator: true },
    });
  });

  it("lets an operator act on a server from the page", async () => {
    const before = running.hub.servers().find((s) => s.name === "fx")!.pid;
    await page.locator('#servers tr[data-server="fx"] button[data-action="restart"]').click();
    await page.locator("#action-message.ok-text").filter({ hasText: "fx: restart done" }).waitFor();
    expect(running.hub.servers().find((s) => s.name === "fx")!.pid).not.toBe(before);
  });

  it("signs out: the token is forgotten and the page waits to be signed in again", async () => {
    await page.locator("#sign-out").click();
    await page.locator("#sign-in").waitFor();
    expect(await page.locator("#main").isHidden()).toBe(true);
    expect(page.url()).toBe(`${origin}/dashboard`);
    expect(await page.locator("#sign-in-error").textContent()).toBe("");
  });

  it("signs another user in, who sees only their profile's tools and is refused an operator's action", async () => {
    // Signing in after a sign-out asks the provider to let the user choose who (prompt=login).
    await page.locator("#sign-in-button").click();
    await signInAtProvider(page, as, "bob");
    await page.waitForURL(`${origin}/dashboard`);
    await page.locator("#user-name").filter({ hasText: "bob@example.com" }).waitFor();
    expect(await page.locator("#user-role").textContent()).toBe("");
    expect(await page.locator("#identity").textContent()).toContain("profile sales");
    await page.locator('#tools tr[data-tool="fx__echo"]').waitFor();
    const tools = await page
      .locator("#tools tbody tr[data-tool]")
      .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-tool")));
    expect(tools.length).toBeGreaterThan(0);
    expect(tools.filter((name) => !name?.startsWith("fx__"))).toEqual([]);
    expect(await page.locator('#servers tr[data-server="gh"]').count()).toBe(0);

    expect(await callEcho("fx__echo", "from bob")).toContain("echo: from bob");
    expect(callers.at(-1)).toMatchObject({
      tool: "fx__echo",
      identity: { via: "oauth", subject: "bob", profile: "sales", operator: false },
    });

    const pid = running.hub.servers().find((s) => s.name === "fx")!.pid;
    await page.locator('#servers tr[data-server="fx"] button[data-action="restart"]').click();
    const refused = page.locator("#action-message.error");
    await refused.filter({ hasText: "refused (403)" }).waitFor();
    expect(await refused.textContent()).toContain("acting on servers is for operators");
    expect(running.hub.servers().find((s) => s.name === "fx")!.pid).toBe(pid);
    expect(errors).toEqual([]);
  });

  it("says so when the provider signs in someone no rule of the gateway admits", async () => {
    await page.locator("#sign-out").click();
    await page.locator("#sign-in-button").click();
    await signInAtProvider(page, as, "carol");
    await page.waitForURL(`${origin}/dashboard`);
    const problem = page.locator("#sign-in-error");
    await problem.filter({ hasText: "no rule" }).waitFor();
    expect(await problem.textContent()).toBe(
      "Not signed in: Forbidden: you are signed in, but no rule of this gateway's auth.access admits you; ask its operator for access",
    );
    expect(await page.locator("#main").isHidden()).toBe(true);
    expect(await page.locator("#login").isHidden()).toBe(true);
    expect(errors).toEqual([]);
  });
});

describe("the dashboard signing in without a configured client", { timeout: 90_000 }, () => {
  let running: RunningGateway;
  let origin: string;

  beforeAll(async () => {
    ({ running, origin } = await serveWith(config(as.issuer, "")));
    as.setResource(origin, { scopes: ["mcp:tools"] });
  }, 60_000);
  afterAll(() => running?.close());

  it("says what to configure when the provider does not let a browser register a client", async () => {
    // oidc-provider answers its registration endpoint without CORS headers, as many do.
    const page = await browser.newPage();
    try {
      await page.goto(`${origin}/dashboard`);
      const problem = page.locator("#sign-in-error");
      await problem.filter({ hasText: "register" }).waitFor();
      const text = await problem.textContent();
      expect(text).toContain(`does not let a browser page register a client`);
      expect(text).toContain(`redirect URI ${origin}/dashboard`);
      expect(text).toContain("auth.dashboard.clientId");
      expect(page.url()).toBe(`${origin}/dashboard`);
    } finally {
      await page.close();
    }
  });

  it("registers itself where the provider allows it, once, and signs in", async () => {
    const page = await browser.newPage();
    let registrations = 0;
    // A provider whose registration endpoint serves CORS: oidc-provider's own answer, passed
    // through with the header such a provider adds.
    await page.route(as.endpoints.registration, async (route) => {
      const request = route.request();
      if (request.method() === "OPTIONS") {
        await route.fulfill({
          status: 204,
          headers: {
            "access-control-allow-origin": origin,
            "access-control-allow-methods": "POST",
            "access-control-allow-headers": "content-type, accept",
          },
        });
        return;
      }
      registrations++;
      const answer = await route.fetch();
      await route.fulfill({
        response: answer,
        headers: { ...answer.headers(), "access-control-allow-origin": origin },
      });
    });
    try {
      await page.goto(`${origin}/dashboard`);
      await signInAtProvider(page, as, "alice");
      await page.waitForURL(`${origin}/dashboard`);
      await page.locator("#user-name").filter({ hasText: "alice@example.com" }).waitFor();

      // A reload forgets the token and signs in again by itself: the provider's session and
      // the grant given make it a round of redirects, without its pages.
      const visited: string[] = [];
      page.on("request", (request) => {
        if (request.isNavigationRequest()) visited.push(request.url());
      });
      await page.reload();
      await page.locator("#user-name").filter({ hasText: "alice@example.com" }).waitFor();
      expect(page.url()).toBe(`${origin}/dashboard`);
      expect(visited.some((url) => url.startsWith(`${as.issuer}/auth`))).toBe(true);
      expect(visited.filter((url) => url.startsWith(`${as.issuer}/interaction/`))).toEqual([]);
      // The client registered at the first sign-in is used again.
      expect(registrations).toBe(1);
    } finally {
      await page.close();
    }
  });
});
