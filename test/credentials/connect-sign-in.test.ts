/**
 * The sign-in a connect link asks of its browser (ConnectSignIn) against a real oidc-provider:
 * the client it uses (auth.dashboard's, or one it registers), what it says when the provider
 * offers no registration, and a state brought back to another browser.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWith } from "../../src/assembly/verify-with.js";
import { OAuthAuthenticator } from "../../src/auth/oauth-authenticator.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { ConnectLinks } from "../../src/credentials/connect-links.js";
import { ConnectSignIn } from "../../src/credentials/connect-sign-in.js";
import { McplexError } from "../../src/errors.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";
import { userAt } from "./support/link-sign-in.js";

const BASE = "http://127.0.0.1:8420";
let idp: AuthServer;

beforeAll(async () => {
  idp = await startAuthServer();
});
afterAll(async () => {
  await idp?.close();
});

function signInWith(extra = "", fetchFn?: typeof fetch): { signIn: ConnectSignIn; links: ConnectLinks } {
  const config = parseConfig(
    `auth:\n  issuers:\n    - issuer: ${idp.issuer}\n  scopes: ["mcp:tools"]\n${extra}`,
    { source: "mcplex.yaml", env: {} },
  );
  const links = new ConnectLinks({ base: BASE });
  const authenticator = new OAuthAuthenticator(config.auth!);
  // As the HTTP front does once it listens: the gateway's own URL is the audience accepted.
  authenticator.bound([BASE]);
  const signIn = new ConnectSignIn({
    links,
    auth: config.auth!,
    verify: verifyWith(() => authenticator),
    ...(fetchFn === undefined ? {} : { fetch: fetchFn }),
  });
  return { signIn, links };
}

function ticketOf(links: ConnectLinks, sub = "alice") {
  return links.check(
    new URL(links.connectUrl(userAt(idp, sub), "github")).searchParams.get("ticket"),
    "github",
  );
}

describe("signing a connect link's browser in at the gateway's provider", () => {
  it("uses auth.dashboard's client at its issuer, with PKCE, the gateway as resource and its own redirect", async () => {
    const { signIn, links } = signInWith("  dashboard:\n    clientId: mcplex-page\n");
    const url = await signIn.begin(ticketOf(links), "b".repeat(32), AbortSignal.timeout(10_000));
    expect(url.origin).toBe(idp.issuer);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: "mcplex-page",
      redirect_uri: `${BASE}/connect/-/signed-in`,
      resource: BASE,
      code_challenge_method: "S256",
      scope: "mcp:tools",
    });
  });

  it("registers a client of its own without one, and says what to register where the provider offers no registration", async () => {
    const { signIn, links } = signInWith();
    const url = await signIn.begin(ticketOf(links), "b".repeat(32), AbortSignal.timeout(10_000));
    expect(url.searchParams.get("client_id")).not.toBe("mcplex-page");
    // The same provider, its metadata without a registration endpoint.
    const withoutRegistration: typeof fetch = async (input, init) => {
      const answer = await fetch(input, init);
      if (!String(input).includes("/.well-known/")) return answer;
      const { registration_endpoint: _, ...metadata } = (await answer.json()) as Record<string, unknown>;
      return Response.json(metadata, { status: answer.status });
    };
    const bare = signInWith("", withoutRegistration);
    const error = await bare.signIn
      .begin(ticketOf(bare.links), "b".repeat(32), AbortSignal.timeout(10_000))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McplexError);
    expect(error).toMatchObject({
      code: "CONFIG_INVALID",
      path: "auth.dashboard.clientId",
      message: `connect links sign their user in at ${idp.issuer}, which offers no client registration`,
      hint: expect.stringContaining(`redirect URIs ${BASE}/connect/-/signed-in`),
    });
  });

  it("refuses the provider's answer brought to another browser than the one that began, before the code is tried", async () => {
    const { signIn, links } = signInWith();
    const url = await signIn.begin(ticketOf(links), "a".repeat(32), AbortSignal.timeout(10_000));
    const answer = await idp.approve(url, { user: "alice" });
    await expect(signIn.finish(answer, "c".repeat(32), AbortSignal.timeout(10_000))).rejects.toThrow(
      "this sign-in was begun in another browser",
    );
    await expect(signIn.finish(answer, undefined, AbortSignal.timeout(10_000))).rejects.toThrow(
      "this sign-in was begun in another browser",
    );
    // The browser that began: signed in as alice, the link's user (the token checked by the authenticator).
    const done = await signIn.finish(answer, "a".repeat(32), AbortSignal.timeout(10_000));
    expect(done).toMatchObject({ signedIn: { subject: "alice", issuer: idp.issuer }, isTicketUser: true });
  });
});
