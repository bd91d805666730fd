/// <reference lib="dom" />
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";
import { type ConnectionsGateway, startConnectionsGateway, USERS } from "./connections-gateway.js";
import {
  oauthRecord,
  SECRET_ACCESS_TOKEN,
  SECRET_REFRESH_TOKEN,
  SECRET_VALUE,
  TestVault,
  testRevoke,
  testUserKey,
  testUserOf,
  valuesRecord,
} from "./test-vault.js";

// "Your connections" and the operator's "Users" on the dashboard page, in a real browser
// (Debian's Chromium), its users signed in at a real authorization server (oidc-provider): a
// user sees the connection put in the vault for them, disconnects it after confirming, and the
// vault no longer has it; an operator revokes another user's.

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/** A loopback redirect URI: the provider accepts it on any port (RFC 8252 §7.3, a native client). */
const REDIRECT = "http://127.0.0.1/dashboard";

/** Fills the test provider's login page as `user`, and its consent page when it comes. */
async function signInAtProvider(page: Page, as: AuthServer, user: string): Promise<void> {
  await page.waitForURL((url) => url.href.startsWith(`${as.issuer}/interaction/`));
  await page.fill('input[name="login"]', user);
  await page.fill('input[name="password"]', "anything");
  await page.click('button:has-text("Sign in")');
  const consent = page.locator('form[data-prompt="consent"] button');
  await Promise.race([
    consent.waitFor().catch(() => {}),
    page.waitForURL((url) => !url.href.startsWith(as.issuer)).catch(() => {}),
  ]);
  if (page.url().startsWith(as.issuer)) await consent.click();
}

let as: AuthServer;
let browser: Browser;
let gw: ConnectionsGateway;
let page: Page;
const vault = new TestVault();
const revoke = testRevoke(vault);
const errors: string[] = [];
const key = (sub: string) => testUserKey(as.issuer, sub);

beforeAll(async () => {
  [as, browser] = await Promise.all([
    startAuthServer({ users: USERS }),
    chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] }),
  ]);
  const client = await as.registerClient({ redirect_uris: [REDIRECT] });
  gw = await startConnectionsGateway(
    as,
    { vault, userOf: testUserOf, revoke },
    { clientId: client.clientId },
  );
  page = await browser.newPage();
  page.on("pageerror", (error) => errors.push(error.message));
}, 60_000);
afterAll(async () => {
  await page?.close();
  await browser?.close();
  await gw?.close();
  expect(as?.serverErrors).toEqual([]);
  await as?.close();
});

describe("the dashboard's connections", { timeout: 90_000 }, () => {
  it("shows a signed-in user their connections, and disconnects one after a confirmation", async () => {
    await vault.put(key("alice"), "github", oauthRecord("alice"));
    await vault.put(key("alice"), "notion", valuesRecord("alice"));
    await vault.put(key("bob"), "github", oauthRecord("bob"));
    await page.goto(`${gw.origin}/dashboard`);
    await signInAtProvider(page, as, "alice");
    await page.waitForURL(`${gw.origin}/dashboard`);
    await page.locator("#user-name").filter({ hasText: "alice@example.com" }).waitFor();

    const github = page.locator('#connections tr[data-server="github"]');
    await github.waitFor();
    expect(await github.locator("td").nth(1).textContent()).toBe("your account (OAuth)");
    expect(await page.locator('#connections tr[data-server="notion"] td').nth(1).textContent()).toBe(
      "values you set",
    );
    // Alice is no operator: no Users panel.
    expect(await page.locator("#users-section").isHidden()).toBe(true);

    // A first click only asks; Cancel leaves everything as it was.
    await github.locator('button[data-action="disconnect"]').click();
    expect(await github.locator(".confirm-question").textContent()).toContain("Disconnect github?");
    await github.locator('button[data-action="cancel"]').click();
    expect(await github.locator('button[data-action="disconnect"]').isVisible()).toBe(true);
    expect(revoke.calls).toEqual([]);

    await github.locator('button[data-action="disconnect"]').click();
    await github.locator('button[data-action="confirm"]').click();
    await page
      .locator("#connections-message.ok-text")
      .filter({ hasText: "github: disconnected github" })
      .waitFor();
    await github.waitFor({ state: "detached" });
    expect(await vault.servers(key("alice"))).toEqual(["notion"]);
    expect(await vault.servers(key("bob"))).toEqual(["github"]);
    expect(revoke.calls).toEqual([[key("alice"), "github"]]);
    expect(errors).toEqual([]);
  });

  it("lets an operator revoke another user's connection from the Users panel", async () => {
    await page.locator("#sign-out").click();
    await page.locator("#sign-in-button").click();
    await signInAtProvider(page, as, "carol");
    await page.waitForURL(`${gw.origin}/dashboard`);
    await page.locator("#user-name").filter({ hasText: "carol@example.com" }).waitFor();
    // Carol, an operator, has connected nothing herself.
    await page.locator("#connections tr.empty").filter({ hasText: "you have connected no server" }).waitFor();

    const bob = page.locator(`#users tr[data-user="${key("bob")}"]`);
    await bob.waitFor();
    expect(await bob.locator("td.name").textContent()).toBe("bob");
    const row = bob.locator('.user-server[data-server="github"]');
    await row.locator('button[data-action="revoke"]').click();
    expect(await row.locator(".confirm-question").textContent()).toContain("Revoke bob's github?");
    await row.locator('button[data-action="confirm"]').click();
    await page
      .locator("#users-message.ok-text")
      .filter({ hasText: "bob github: disconnected github" })
      .waitFor();
    await bob.waitFor({ state: "detached" });
    expect(await vault.users()).toEqual([key("alice")]);

    // Revoke all of alice's.
    const alice = page.locator(`#users tr[data-user="${key("alice")}"]`);
    await alice.locator('button[data-action="revoke-all"]').click();
    await alice.locator('td.actions button[data-action="confirm"]').click();
    await page.locator("#users tr.empty").filter({ hasText: "no user has connected a server" }).waitFor();
    expect(await vault.users()).toEqual([]);

    const text = await page.content();
    for (const secret of [SECRET_ACCESS_TOKEN, SECRET_REFRESH_TOKEN, SECRET_VALUE])
      expect(text).not.toContain(secret);
    expect(errors).toEqual([]);
  });
});
