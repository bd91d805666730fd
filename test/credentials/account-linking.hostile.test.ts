/**
 * Account linking through another's connect link (issue 32, points 6 and 7), against a real
 * gateway (serve()) whose users sign in at one oidc-provider and whose per-user servers are a
 * remote MCP server behind a second oidc-provider (`acct`) and a stdio server run with each
 * user's `${user:NAME}` values (`notes`). People are browsers (link-browser.ts): each signs in
 * at each provider with their own account there.
 * - 6: alice's link opened by bob, who signs in as himself: before, bob's upstream grant (or his
 *   values) were stored as alice's and her calls ran as bob, the page greeting bob as alice;
 *   now nothing is stored and bob is told the link is not his. The same for the upstream's
 *   authorization URL alice's browser was sent to, passed on to bob.
 * - 7: a link reopened after alice completed it: before, a third browser rebound her connection
 *   to its own upstream account; now it is refused as used (and as not theirs, for another user).
 */
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { userKey } from "../../src/credentials/user-ref.js";
import { resultText } from "../support/gateway.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";
import { type PerUserGateway, startPerUserGateway } from "./per-user-gateway.js";
import { LinkBrowser } from "./support/link-browser.js";
import { startWhoamiServer, type WhoamiServer } from "./support/whoami-server.js";

const WHOAMI = resolve("test/fixtures/servers/whoami-server.mjs");
const USERS = ["alice", "bob", "carol"];
let gw: PerUserGateway;
let accounts: AuthServer;
let acct: WhoamiServer;

beforeAll(async () => {
  accounts = await startAuthServer({
    users: USERS.map((sub) => ({ sub, email: `${sub}@accounts.example`, groups: ["eng"] })),
  });
  acct = await startWhoamiServer(accounts);
  accounts.setResource(acct.url, { scopes: ["mcp:tools"] });
  gw = await startPerUserGateway(
    USERS,
    "",
    `  acct:
    url: ${acct.url}
    credentials: per-user
  notes:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(WHOAMI)}]
    env: { WHOAMI_USER: "\${user:NAME}", WHOAMI_KEY: "\${user:API_KEY}" }
    credentials: per-user
`,
  );
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await acct?.close();
  await accounts?.close();
  expect(accounts?.serverErrors).toEqual([]);
  expect(gw?.as.serverErrors).toEqual([]);
});

/** A person's browser: their account at the gateway's provider and at the upstream's. */
function browserOf(atGateway: string, atUpstream = atGateway): LinkBrowser {
  return new LinkBrowser(
    new Map([
      [gw.as, atGateway],
      [accounts, atUpstream],
    ]),
  );
}

/** The text of `user`'s call of `tool`, and whether it was a tool error. */
async function call(user: string, tool: string): Promise<{ text: string; isError: boolean }> {
  const answer = await gw.call(gw.tokens[user]!, tool);
  const result = (answer.json as { result?: { isError?: boolean } }).result;
  expect(result, JSON.stringify(answer.json)).toBeDefined();
  return { text: resultText(result), isError: result?.isError === true };
}

/** Who `user`'s call of `tool` ran as: the upstream account's `sub` or the values' NAME, or "nobody" before a connect. */
async function runsAs(user: string, tool: "acct__whoami" | "notes__whoami"): Promise<string> {
  const { text, isError } = await call(user, tool);
  if (isError) return text.includes("/connect/") ? "nobody" : `error: ${text}`;
  return tool === "acct__whoami" ? text : (JSON.parse(text) as { user: string }).user;
}

/** The connect link `user`'s call of `tool` answered with. */
async function linkOf(user: string, tool: string): Promise<string> {
  const { text, isError } = await call(user, tool);
  expect(isError, text).toBe(true);
  const link = /https?:\/\/\S+\/connect\/\w+\?ticket=[\w.~-]+/.exec(text)?.[0];
  expect(link, text).toBeDefined();
  return link!;
}

/** What was found stored for a user who never connected (each found one is a hole), then forgotten. */
const stores: string[] = [];

/** Records whether the vault holds anything of `user` for `server`, then drops it and their connections. */
async function forget(user: string, server: string): Promise<void> {
  const key = userKey(gw.as.issuer, user);
  if ((await gw.running.hub.credentialVault.get(key, server)) !== undefined) stores.push(`${user}/${server}`);
  await gw.running.hub.credentialVault.delete(key, server);
  await gw.running.hub.closeUser(key, server);
}

/** Whose upstream account the grant stored for `user`'s `acct` is (its access token's `sub`). */
async function grantOf(user: string): Promise<string> {
  const record = await gw.running.hub.credentialVault.get(userKey(gw.as.issuer, user), "acct");
  const token = record?.oauth?.tokens?.access_token;
  if (token === undefined) return "nobody";
  return (JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")) as { sub: string }).sub;
}

describe("account linking through another user's connect link", () => {
  it(
    "6: bob opening alice's link and signing in as bob stores nothing, and he is told it is not his",
    async () => {
      const outcomes: string[] = [];
      // The per-user OAuth form: bob signs in at the upstream as himself.
      const link = await linkOf("alice", "acct__whoami");
      const bob = browserOf("bob");
      const landed = await bob.open(link);
      outcomes.push(`oauth: page ${landed.status}, alice runs as ${await runsAs("alice", "acct__whoami")}`);
      await forget("alice", "acct");

      // The upstream's authorization URL alice's browser was sent to, passed on to bob.
      const passed = await linkOf("alice", "acct__whoami");
      const alice = browserOf("alice");
      const atUpstream = await alice.open(passed, {
        stopAt: (to) => to.origin === new URL(accounts.issuer).origin,
      });
      const forwarded = await browserOf("bob").open(atUpstream.url);
      outcomes.push(
        `forwarded upstream URL: page ${forwarded.status}, alice runs as ${await runsAs("alice", "acct__whoami")}`,
      );
      await forget("alice", "acct");

      // The values form: bob signs in and, if shown a form, fills in his own values.
      const notes = await linkOf("alice", "notes__whoami");
      const bobForNotes = browserOf("bob");
      const page = await bobForNotes.open(notes);
      const sent = page.text.includes("<form")
        ? (await bobForNotes.submit(page, { NAME: "bob", API_KEY: "bob-own-key" })).status
        : "no form";
      outcomes.push(
        `values: page ${page.status}, form ${sent}, alice runs as ${await runsAs("alice", "notes__whoami")}`,
      );
      reportFigure("account linking (6)", outcomes.join("; "));
      await forget("alice", "notes");

      expect(landed.text).not.toContain("Signed in as alice");
      expect(page.text).not.toContain("(alice)");
      expect(landed.status).toBe(403);
      expect(landed.text).toContain("made for another user");
      expect(landed.text).toContain("Nothing was stored");
      expect(forwarded.status).toBe(400);
      expect(page.status).toBe(403);
      expect(outcomes).toEqual([
        "oauth: page 403, alice runs as nobody",
        "forwarded upstream URL: page 400, alice runs as nobody",
        "values: page 403, form no form, alice runs as nobody",
      ]);
      expect(stores).toEqual([]);
      expect(acct.calls.filter((c) => c.sub === "bob")).toEqual([]);

      // Alice's own link still works for her, after all that.
      const own = await browserOf("alice").open(await linkOf("alice", "acct__whoami"));
      expect(own.status).toBe(200);
      expect(own.text).toContain("Signed in as alice");
      expect(await runsAs("alice", "acct__whoami")).toBe("alice");
    },
    attackTimeout(60_000, 300_000),
  );

  it(
    "7: a link reopened after it was completed is refused as used, by every browser",
    async () => {
      const link = await linkOf("bob", "acct__whoami");
      const done = await browserOf("bob").open(link);
      expect(done.status).toBe(200);
      expect(await runsAs("bob", "acct__whoami")).toBe("bob");
      expect(await grantOf("bob")).toBe("bob");

      const probes = attackSize(3, 30);
      const answers = new Map<string, number>();
      for (let i = 0; i < probes; i++) {
        // A browser where bob's session at the gateway's provider lingers, or carol's own.
        const third = i % 3 === 2 ? browserOf("carol") : browserOf("bob", "carol");
        const landed = await third.open(link);
        const key = `${landed.status} ${landed.text.includes("already been used") ? "used" : landed.text.includes("made for another user") ? "not theirs" : "other"}`;
        answers.set(key, (answers.get(key) ?? 0) + 1);
      }
      const after = await grantOf("bob");
      reportFigure(
        "reopened link (7)",
        `${probes} reopenings: ${[...answers].map(([k, n]) => `${n}× ${k}`).join(", ")}; bob's stored grant is ${after}'s`,
      );
      expect(after).toBe("bob");
      expect([...answers.keys()].sort()).toEqual(probes >= 3 ? ["403 not theirs", "409 used"] : ["409 used"]);
    },
    attackTimeout(60_000, 300_000),
  );
});
