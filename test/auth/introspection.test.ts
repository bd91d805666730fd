/**
 * Opaque access tokens checked by introspection (RFC 7662) at a real authorization server
 * (oidc-provider, test/support/oidc-provider.ts): what the issuer says decides, and only an
 * issuer that does not answer is reported as away.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OAuthAuthenticator } from "../../src/auth/oauth-authenticator.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";

const BASE = "http://127.0.0.1:1";
const RESOURCE = `${BASE}/mcp`;

let as: AuthServer;
let auth: OAuthAuthenticator;
const events: string[] = [];

beforeAll(async () => {
  as = await startAuthServer();
  as.setResource(RESOURCE, { format: "opaque" });
  const { clientId, clientSecret } = as.resourceServerClient;
  const config = parseConfig(
    `servers: {}
auth:
  resource: ${BASE}
  issuers:
    - issuer: ${as.issuer}
      introspection: { clientId: ${clientId}, clientSecret: ${clientSecret} }
`,
    { source: "introspection.yaml", env: {} },
  );
  auth = new OAuthAuthenticator(config.auth!, { onEvent: (message) => events.push(message) });
});
afterAll(async () => {
  expect(as.serverErrors).toEqual([]);
  await as.close();
});

const present = (token: string) =>
  auth.authenticate({
    headers: { authorization: `Bearer ${token}` },
    remoteAddress: "127.0.0.1",
    path: "/mcp",
  });

describe("opaque tokens, introspected", () => {
  it("admits a real opaque token for this resource as its user", async () => {
    const { accessToken } = await as.signIn({ user: "alice", resource: RESOURCE });
    expect(accessToken.split(".")).toHaveLength(1);
    const outcome = await present(accessToken);
    expect(outcome).toMatchObject({ ok: true, identity: { via: "oauth", subject: "alice" } });
  });

  it("refuses a token the issuer does not know as not active, and logs nothing about the issuer", async () => {
    const outcome = await present("an-opaque-token-nobody-issued");
    expect(outcome).toMatchObject({ ok: false, status: 401, message: expect.stringContaining("not active") });
    expect(events).toEqual([]);
  });

  it("refuses a JWE-shaped token the issuer will not introspect (400) as not active, not as the issuer being away", async () => {
    const before = as.introspections;
    const outcome = await present("eyJhbGciOiJSU0EtT0FFUCJ9.a2V5.aXY.Y2lwaGVy.dGFn");
    // oidc-provider answers such a token 400 unsupported_token_type: it was asked, and said no.
    expect(as.introspections).toBe(before + 1);
    expect(outcome).toMatchObject({ ok: false, status: 401, message: expect.stringContaining("not active") });
    expect(events).toEqual([]);
  });

  it("asks the issuer once about a refused token that comes back, not once per request", async () => {
    const before = as.introspections;
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await present("a-refused-opaque-token-sent-again"));
    expect(as.introspections).toBe(before + 1);
    for (const outcome of answers)
      expect(outcome).toMatchObject({
        ok: false,
        status: 401,
        message: expect.stringContaining("not active"),
      });
  });

  it("still says the issuer could not be reached when it does not answer, and logs it", async () => {
    const logged = events.length;
    await as.stop();
    try {
      const outcome = await present("another-opaque-token-nobody-issued");
      expect(outcome).toMatchObject({
        ok: false,
        status: 401,
        message: expect.stringContaining("could not be checked"),
      });
      expect(events.slice(logged)).toEqual([
        expect.stringContaining("sign-in: a token could not be checked"),
      ]);
    } finally {
      await as.start();
    }
  });
});
