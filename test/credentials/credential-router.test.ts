/**
 * The hub's one credential source over one per kind of `credentials:`: an exchange server's plan
 * comes from the (real) TokenExchangeSource, a per-user server's from the per-user source, and
 * neither ever from the other. The per-user source here only records that it was asked (the
 * real one, with the vault and connect pages, has its own tests).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerConfig } from "../../src/config/types.js";
import { credentialRouter } from "../../src/credentials/credential-router.js";
import { TokenExchangeSource } from "../../src/credentials/token-exchange.js";
import type { UserCredentialSource, UserRef } from "../../src/credentials/user-credentials.js";
import { McplexError } from "../../src/errors.js";
import type { Bearer } from "../../src/upstream/bearer-fetch.js";
import { remote, stdio } from "../support/config.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";

const GATEWAY = "http://127.0.0.1:1/mcp";
const API = "https://api.example.com/mcp";

let as: AuthServer;
let exchange: ServerConfig;
let alice: UserRef;
const perUserAsked: string[] = [];
const perUser: UserCredentialSource = {
  plan: async (_user, server) => {
    perUserAsked.push(server.name);
    return { values: { TOKEN: "alice's own" } };
  },
};

beforeAll(async () => {
  as = await startAuthServer();
  const client = await as.allowExchange({ audiences: { [API]: {} } });
  exchange = remote("api", "http://127.0.0.1:1/mcp", "streamable-http", {
    credentials: { exchange: { audience: API, ...client } },
  });
  const { accessToken } = await as.signIn({ user: "alice", resource: GATEWAY });
  alice = { key: "alice-key", subject: "alice", issuer: as.issuer, subjectToken: () => accessToken };
});

afterAll(async () => {
  await as?.close();
});

describe("credentialRouter", () => {
  it("plans an exchange server with the exchange source and a per-user server with the per-user source", async () => {
    const router = credentialRouter({ perUser, exchange: new TokenExchangeSource({ issuers: [as.issuer] }) });
    const before = as.exchangesIssued;
    const plan = await router.plan(alice, exchange);
    expect(plan.values).toBeUndefined();
    expect(await (plan.bearer as Bearer)()).toMatch(/^ey/);
    expect(as.exchangesIssued - before).toBe(1);
    expect(perUserAsked).toEqual([]);

    const notes = stdio("notes", "node", [], { credentials: "per-user" });
    expect(await router.plan(alice, notes)).toEqual({ values: { TOKEN: "alice's own" } });
    expect(perUserAsked).toEqual(["notes"]);
    expect(as.exchangesIssued - before).toBe(1);
  });

  it("refuses a kind it has no source for, and a shared server", async () => {
    const onlyPerUser = credentialRouter({ perUser });
    const missing = await onlyPerUser.plan(alice, exchange).catch((e: unknown) => e as McplexError);
    expect(missing).toBeInstanceOf(McplexError);
    expect((missing as McplexError).message).toBe(
      "api: credentials: { exchange } has no credential source in this gateway",
    );
    const shared = await onlyPerUser
      .plan(alice, remote("shared", "http://127.0.0.1:1/mcp"))
      .catch((e: unknown) => e as McplexError);
    expect((shared as McplexError).message).toMatch(/^shared: is called with shared credentials/);
  });
});
