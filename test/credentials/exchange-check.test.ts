/**
 * `mcplex doctor`'s check of a `credentials: { exchange }` server: its identity provider asked
 * what an exchange will ask it (the test oidc-provider with and without the grant).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerConfig, TokenExchangeConfig } from "../../src/config/types.js";
import { checkTokenExchange } from "../../src/credentials/exchange-check.js";
import { TOKEN_EXCHANGE_GRANT } from "../../src/credentials/exchange-provider.js";
import { remote } from "../support/config.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";

let exchanging: AuthServer;
let plain: AuthServer;

function exchangeServer(exchange: Partial<TokenExchangeConfig> = {}): ServerConfig {
  return remote("notes", "http://127.0.0.1:1/mcp", "streamable-http", {
    credentials: { exchange: { audience: "https://notes.example/mcp", clientId: "mcplex", ...exchange } },
  });
}

beforeAll(async () => {
  exchanging = await startAuthServer();
  plain = await startAuthServer({ tokenExchange: false });
});

afterAll(async () => {
  await exchanging?.close();
  await plain?.close();
});

describe("checkTokenExchange", () => {
  it("passes a provider that advertises the token-exchange grant", async () => {
    const [report] = await checkTokenExchange(exchangeServer(), [exchanging.issuer]);
    expect(report).toEqual({
      status: "ok",
      server: "notes",
      message: `${exchanging.issuer} exchanges tokens (RFC 8693) at ${exchanging.endpoints.token}; the client mcplex asks for https://notes.example/mcp`,
    });
  });

  it("fails a provider that does not offer it, naming the grant it lacks", async () => {
    const [report] = await checkTokenExchange(exchangeServer(), [plain.issuer]);
    expect(report?.status).toBe("fail");
    expect(report?.message).toMatch(
      new RegExp(
        `^the identity provider ${plain.issuer} does not offer token exchange: its grant_types_supported \\(.*authorization_code.*\\) lacks ${TOKEN_EXCHANGE_GRANT}$`,
      ),
    );
    expect(report?.hint).toMatch(/Enable RFC 8693 token exchange at the provider for the client mcplex/);
  });

  it("checks every issuer a user may come from when the server names none", async () => {
    const reports = await checkTokenExchange(exchangeServer(), [exchanging.issuer, plain.issuer]);
    expect(reports.map((r) => r.status)).toEqual(["ok", "fail"]);
    const pinned = await checkTokenExchange(exchangeServer({ issuer: exchanging.issuer }), [
      exchanging.issuer,
      plain.issuer,
    ]);
    expect(pinned.map((r) => r.status)).toEqual(["ok"]);
  });

  it("fails an exchange issuer outside auth.issuers, and a config without sign-in", async () => {
    const [outside] = await checkTokenExchange(exchangeServer({ issuer: plain.issuer }), [exchanging.issuer]);
    expect(outside?.status).toBe("fail");
    expect(outside?.message).toBe(
      `credentials.exchange.issuer ${plain.issuer} is not one of auth.issuers (${exchanging.issuer}), and users' tokens are sent to none other`,
    );
    const [none] = await checkTokenExchange(exchangeServer(), []);
    expect(none?.message).toMatch(/needs sign-in, and auth.issuers lists no identity provider/);
  });

  it("fails a provider that does not answer, and plain http off this machine", async () => {
    const down = await startAuthServer();
    const issuer = down.issuer;
    await down.close();
    const [report] = await checkTokenExchange(exchangeServer(), [issuer]);
    expect(report?.status).toBe("fail");
    expect(report?.message).toMatch(
      new RegExp(
        `^the identity provider ${issuer} cannot be asked for token exchange: no metadata \\(OpenID discovery: .*; RFC 8414 metadata: .*\\)$`,
      ),
    );
    // Refused before any request: nothing is sent to an address off this machine.
    const [clear] = await checkTokenExchange(exchangeServer(), ["http://login.example.com"]);
    expect(clear?.message).toMatch(/cannot be asked for token exchange: it is not https/);
  });

  it("warns when the provider's metadata does not list its grant types", async () => {
    const http = createServer((req, res) => {
      const { port } = http.address() as AddressInfo;
      const issuer = `http://127.0.0.1:${port}`;
      if (req.url === "/.well-known/openid-configuration") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ issuer, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks` }));
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    try {
      const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
      const [report] = await checkTokenExchange(exchangeServer(), [issuer]);
      expect(report?.status).toBe("warn");
      expect(report?.message).toMatch(/does not list grant_types_supported/);
    } finally {
      await new Promise<void>((resolve) => http.close(() => resolve()));
    }
  });

  it("says nothing of a server without exchange", async () => {
    expect(await checkTokenExchange(remote("shared", "http://127.0.0.1:1/mcp"), [exchanging.issuer])).toEqual(
      [],
    );
  });
});
