import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerConfig } from "../../src/config/types.js";
import { ConnectFlow } from "../../src/credentials/connect-flow.js";
import { ConnectLinks } from "../../src/credentials/connect-links.js";
import { FileCredentialVault } from "../../src/credentials/file-credential-vault.js";
import type { UserRef } from "../../src/credentials/user-credentials.js";
import { connectPages } from "../../src/fronts/connect-pages.js";
import { type HttpFront, startHttpFront } from "../../src/fronts/http-front.js";
import { Gateway } from "../../src/gateway/gateway.js";
import { Hub } from "../../src/hub/hub.js";
import { configOf, remote, stdio } from "../support/config.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";
import { rng } from "../support/rng.js";
import { LinkBrowser } from "./support/link-browser.js";
import { linkSignIn, userAt } from "./support/link-sign-in.js";

// Mallory holds a connect link of her own and wants what she connects stored under Alice (so
// that Alice's calls run with Mallory's account), or Alice's values read back. She alters her
// ticket every way a byte can be (payload rewritten to name Alice, MACs swapped, characters
// changed, cut, lengthened), forges OAuth states, and sends forms too large, of the wrong type,
// from other origins, for servers that do not exist. Every probe must be refused with a page
// (4xx, never a 5xx or a dropped connection), nothing may be stored under Alice, and the pages
// must go on serving a real connect afterwards. (The form now carries a sealed grant for the
// browser that signed in, not the ticket: a ticket posted in it is refused as any forgery is.)

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const dir = mkdtempSync(join(tmpdir(), "mcplex-connect-hostile-"));
let alice: UserRef;
let mallory: UserRef;
/** The gateway's identity provider, where the pages sign their browser in. */
let idp: AuthServer;
const notes = stdio("notes", "node", ["notes.js"], {
  credentials: "per-user",
  env: { NOTES_KEY: "${user:NOTES_KEY}" },
} as Partial<ServerConfig>);
const github = remote("github", "http://127.0.0.1:1/mcp", "streamable-http", { credentials: "per-user" });
let vault: FileCredentialVault;
let links: ConnectLinks;
let hub: Hub;
let front: HttpFront;
let base = "";

beforeAll(async () => {
  idp = await startAuthServer({
    users: ["alice", "mallory"].map((sub) => ({ sub, email: `${sub}@x`, groups: [] })),
  });
  alice = userAt(idp, "alice");
  mallory = userAt(idp, "mallory");
  vault = new FileCredentialVault({ env: { MCPLEX_HOME: dir } });
  links = new ConnectLinks({ base: () => base });
  const servers = new Map([notes, github].map((s) => [s.name, s]));
  hub = new Hub({ config: configOf([]) });
  await hub.start();
  front = await startHttpFront(new Gateway(hub), {
    port: 0,
    connect: connectPages({
      flow: new ConnectFlow({ vault, links }),
      links,
      signIn: linkSignIn(links, idp),
      server: (n) => servers.get(n),
    }),
  });
  base = front.url.replace(/\/mcp$/, "");
});
afterAll(async () => {
  await front?.close();
  await hub?.close();
  await idp?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Mallory's tickets altered: the probes. */
function forgedTickets(count: number, next: () => number): string[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const own = [0, 1, 2].map(
    (i) => new URL(links.connectUrl(i === 2 ? alice : mallory, "notes")).searchParams.get("ticket")!,
  );
  const [body, mac] = own[0]!.split(".") as [string, string];
  const aliceBody = own[2]!.split(".")[0]!;
  const payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  const rewritten = Buffer.from(JSON.stringify({ ...payload, user: alice.key, subject: "alice" })).toString(
    "base64url",
  );
  const made: string[] = [];
  for (let i = 0; i < count; i++) {
    const at = Math.floor(next() * own[0]!.length);
    const kinds = [
      () => `${rewritten}.${mac}`,
      () => `${aliceBody}.${mac}`,
      () => `${aliceBody}.${own[1]!.split(".")[1]}`,
      () => `${own[0]!.slice(0, at)}${pick([...BASE64URL])}${own[0]!.slice(at + 1)}`,
      () => own[0]!.slice(0, at),
      () => `${own[0]}${pick([...BASE64URL])}`,
      () => `${body}.`,
      () => `.${mac}`,
      () => Array.from({ length: Math.floor(next() * 300) }, () => pick([...`${BASE64URL}.`])).join(""),
    ];
    const ticket = pick(kinds)();
    // A change that happens to leave the ticket as it was is not a probe.
    if (!own.includes(ticket)) made.push(ticket);
  }
  return made;
}

const form = (body: URLSearchParams | string, headers: Record<string, string> = {}) =>
  fetch(`${base}/connect/notes`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: base, ...headers },
    body,
  });

describe("the connect pages under attack", () => {
  it(
    "never store under another user than the ticket's, and refuse every probe with a page",
    async () => {
      const next = rng(7);
      const tickets = forgedTickets(attackSize(150, 3000), next);
      const statuses = new Map<number, number>();
      const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
      for (const ticket of tickets) {
        const shown = await fetch(`${base}/connect/notes?ticket=${encodeURIComponent(ticket)}`);
        count(shown.status);
        expect(shown.status, ticket).toBe(400);
        await shown.text();
        const posted = await form(new URLSearchParams({ ticket, NOTES_KEY: "mallory-key" }));
        count(posted.status);
        expect(posted.status, ticket).toBe(400);
        await posted.text();
      }
      // Forged OAuth states: sealed by nobody, or sealed and then altered.
      const sealed = links.seal({
        u: alice.key,
        s: "alice",
        v: "github",
        k: "verifier",
        a: "http://127.0.0.1:1",
        e: Date.now() + 60_000,
      });
      for (let i = 0; i < attackSize(50, 1000); i++) {
        const at = Math.floor(next() * sealed.length);
        const state = `${sealed.slice(0, at)}${BASE64URL[(BASE64URL.indexOf(sealed[at]!) + 1) % 64]}${sealed.slice(at + 1)}`;
        const back = await fetch(`${base}/connect/github/callback?code=stolen&state=${state}`);
        count(back.status);
        expect(back.status).toBe(400);
        const said = await back.text();
        expect(said, state).toContain("does not belong to a connect begun here");
      }
      expect(await vault.users()).toEqual([]);
      reportFigure(
        "forged connect tickets and states",
        `${[...statuses].map(([s, n]) => `${n}×${s}`).join(", ")}`,
      );
    },
    attackTimeout(60_000, 600_000),
  );

  it("refuses forms too large, of another type or origin, without a ticket, and names that are no server", async () => {
    const ticket = new URL(links.connectUrl(mallory, "notes")).searchParams.get("ticket")!;
    const huge = await form(`ticket=${ticket}&NOTES_KEY=${"x".repeat(2 * 1024 * 1024)}`);
    expect(huge.status).toBe(413);
    expect(await huge.text()).toContain("Payload Too Large");
    const json = await form(JSON.stringify({ ticket, NOTES_KEY: "k" }), {
      "content-type": "application/json",
    });
    expect(json.status).toBe(400);
    expect((await form(new URLSearchParams({ ticket, NOTES_KEY: "k" }), { origin: "null" })).status).toBe(
      403,
    );
    expect((await form(new URLSearchParams({ NOTES_KEY: "k" }))).status).toBe(400);
    expect((await form(new URLSearchParams({ ticket, NOTES_KEY: "" }))).status).toBe(400);
    for (const path of [
      "/connect/..%2F..%2Fetc%2Fpasswd",
      "/connect/%E0%A4%A",
      "/connect/notes%00",
      "/connect/github/callback/x",
    ]) {
      const answer = await fetch(`${base}${path}?ticket=${ticket}`);
      expect(answer.status, path).toBeGreaterThanOrEqual(400);
      expect(answer.status, path).toBeLessThan(500);
    }
    // A server whose authorization server cannot be reached: a page that says so, not a 5xx.
    const unreachable = await new LinkBrowser(new Map([[idp, "mallory"]])).open(
      links.connectUrl(mallory, "github"),
    );
    expect(unreachable.status).toBe(400);
    expect(unreachable.text).toContain("github: its sign-in could not be started");
    expect(await vault.users()).toEqual([]);
  });

  it("still connects a real user afterwards, under that user only", async () => {
    const browser = new LinkBrowser(new Map([[idp, "mallory"]]));
    const page = await browser.open(links.connectUrl(mallory, "notes"));
    const saved = await browser.submit(page, { NOTES_KEY: "mallory-own-key" });
    expect(saved.status).toBe(200);
    expect(await vault.users()).toEqual([mallory.key]);
    expect(await vault.get(alice.key, "notes")).toBeUndefined();
  });
});
