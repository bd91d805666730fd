/**
 * The three ways of calling servers as the user, together, through one gateway served by
 * `serve()` with sign-in, two users interleaved on `/mcp`:
 * - `who`, a per-user stdio server (a process per user, its `${user:NAME}` values from the file
 *   vault);
 * - `acct`, a remote server with an authorization server of its own (a second oidc-provider),
 *   `credentials: per-user`: each user connects once through the gateway's `/connect/acct` page,
 *   reached by the link their first call answered with;
 * - `tickets`, a remote server that trusts the gateway's identity provider, `credentials:
 *   { exchange }`: each user's sign-in token exchanged (RFC 8693) for one of its own.
 * Every upstream records whose token (or process) served each call: not one call crosses.
 * A few dozen calls per user in the normal suite, 1,000 each under `npm run test:hostile`.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultText } from "../support/gateway.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";
import { startTokenCheckingServer, type TokenCheckingServer } from "../support/token-checking-server.js";
import {
  type PerUserGateway,
  STATIC_TOKEN,
  startPerUserGateway,
  valuesOf,
  type Whoami,
} from "./per-user-gateway.js";
import { LinkBrowser } from "./support/link-browser.js";
import { startWhoamiServer, type WhoamiServer } from "./support/whoami-server.js";

const USERS = ["alice", "bob"];
const dir = mkdtempSync(join(tmpdir(), "mcplex-three-ways-"));
const auditFile = join(dir, "audit.jsonl");
/** What the gateway's OpenTelemetry exporter sent (traces and metrics, OTLP/JSON). */
const exported: string[] = [];
let collector: Server;
let gw: PerUserGateway;
/** The second authorization server, in front of `acct`. */
let accounts: AuthServer;
let acct: WhoamiServer;
let tickets: TokenCheckingServer;

beforeAll(async () => {
  collector = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      exported.push(Buffer.concat(chunks).toString("utf8"));
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => collector.listen(0, "127.0.0.1", r));
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  accounts = await startAuthServer();
  acct = await startWhoamiServer(accounts);
  accounts.setResource(acct.url, { scopes: ["mcp:tools"] });
  const observed = `audit:\n  to: ${auditFile}\ntelemetry:\n  enabled: true\n  endpoint: ${endpoint}\n`;
  gw = await startPerUserGateway(USERS, observed, async (idp) => {
    tickets = await startTokenCheckingServer({ issuer: idp.issuer, jwksUri: idp.endpoints.jwks });
    const client = await idp.allowExchange({
      audiences: { [tickets.audience]: { scopes: ["tickets:read"], ttlSeconds: 600 } },
    });
    return `  acct:
    url: ${acct.url}
    credentials: per-user
  tickets:
    url: ${tickets.url}
    credentials:
      exchange:
        audience: ${tickets.audience}
        scopes: [tickets:read]
        clientId: ${client.clientId}
        clientSecret: ${client.clientSecret}
`;
  });
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await tickets?.close();
  await acct?.close();
  await accounts?.close();
  await new Promise<void>((r) => collector?.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

/** The text of `user`'s call of `name`, and whether it was a tool error. */
async function call(user: string, name: string, args: Record<string, unknown> = {}) {
  const answer = await gw.call(gw.tokens[user]!, name, args);
  const result = (answer.json as { result?: { isError?: boolean } }).result;
  expect(result, JSON.stringify(answer.json)).toBeDefined();
  return { text: resultText(result), isError: result?.isError === true };
}

/** Connects `user`'s own account of `acct` through the link their call answered with. */
async function connect(user: string): Promise<void> {
  const first = await call(user, "acct__whoami");
  expect(first.isError).toBe(true);
  const link = /https?:\/\/\S+\/connect\/acct\?ticket=[\w.~-]+/.exec(first.text)?.[0];
  expect(link, first.text).toBeDefined();
  // The user's browser signs in at the gateway's provider (who opened the link), then at acct's.
  const browser = new LinkBrowser(
    new Map([
      [gw.as, user],
      [accounts, user],
    ]),
  );
  const done = await browser.open(link!);
  expect(done.signedInAt).toEqual([gw.as.issuer, accounts.issuer]);
  expect(done.text).toContain("Connected");
}

describe("per-user OAuth, token exchange and per-user processes, two users at once", () => {
  it(
    "serves every call with the caller's own token or process: 0 crossings",
    async () => {
      for (const user of USERS) await connect(user);
      const calls = attackSize(45, 1000);
      const crossings: string[] = [];
      const tags = new Map<string, string>();
      const run = async (user: string) => {
        for (let i = 0; i < calls; i += 9) {
          const batch = Array.from({ length: Math.min(9, calls - i) }, async (_, j) => {
            const n = i + j;
            switch (n % 3) {
              case 0: {
                const answer = JSON.parse((await call(user, "who__whoami")).text) as Whoami;
                if (answer.user !== user || answer.key !== valuesOf(user).API_KEY)
                  crossings.push(`${user}'s who call ran in ${answer.user}'s process`);
                return;
              }
              case 1: {
                const { text, isError } = await call(user, "acct__whoami");
                if (isError || text !== user) crossings.push(`${user}'s acct call answered ${text}`);
                return;
              }
              default: {
                const tag = `${user}-${n}`;
                tags.set(tag, user);
                const { text, isError } = await call(user, "tickets__whoami", { tag });
                if (isError || text !== user) crossings.push(`${user}'s tickets call answered ${text}`);
              }
            }
          });
          await Promise.all(batch);
        }
      };
      await Promise.all(USERS.map(run));
      expect(crossings).toEqual([]);
      // What the upstreams saw, not only what came back: each token's subject is its caller.
      for (const served of tickets.served) {
        if (served.tag !== undefined && tags.get(served.tag) !== served.sub)
          crossings.push(`tickets served ${served.tag} with ${served.sub}'s token`);
      }
      expect(crossings).toEqual([]);
      const seen = (sub: string) => acct.calls.filter((c) => c.sub === sub).length;
      // Each user's connect made no call; the interleaved run made a third of the calls each.
      expect(USERS.map(seen)).toEqual(USERS.map(() => Math.floor((calls + 1) / 3)));
      // Two users' tokens, each used only by that user's calls.
      const tokensOf = (sub: string) => new Set(acct.calls.filter((c) => c.sub === sub).map((c) => c.token));
      const [a, b] = USERS.map(tokensOf);
      expect([...a!].filter((token) => b!.has(token))).toEqual([]);
      // Nothing of a user's credentials where an operator looks: the audit trail, the metrics,
      // the dashboard's state and the calls it shows, the traces.
      const operator = { authorization: `Bearer ${STATIC_TOKEN}` };
      const origin = new URL(gw.mcp).origin;
      const looked = [readFileSync(auditFile, "utf8")];
      for (const path of ["/metrics", "/dashboard/state"]) {
        const response = await fetch(`${origin}${path}`, { headers: operator });
        expect(response.status, path).toBe(200);
        looked.push(await response.text());
      }
      // Its spans and metrics go out as it closes.
      await gw.running.close(0);
      expect(exported.some((body) => body.includes("resourceSpans"))).toBe(true);
      looked.push(...exported);
      const everything = looked.join("\n");
      expect(everything).toContain("acct__whoami");
      const secrets = [
        ...Object.values(gw.tokens),
        ...new Set(acct.calls.map((c) => c.token)),
        ...USERS.map((user) => valuesOf(user).API_KEY!),
      ];
      expect(secrets.filter((secret) => everything.includes(secret))).toEqual([]);
      reportFigure(
        "three ways, interleaved",
        `${calls} calls per user (stdio per user, per-user OAuth, token exchange), ${crossings.length} crossings, ${gw.as.exchangesIssued} exchanges`,
      );
    },
    attackTimeout(180_000, 900_000),
  );
});
