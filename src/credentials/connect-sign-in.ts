import { createHash, timingSafeEqual } from "node:crypto";
import {
  type AuthorizationServerMetadata,
  discoverAuthorizationServerMetadata,
  exchangeAuthorization,
  type FetchLike,
  registerClient,
  startAuthorization,
} from "@modelcontextprotocol/client";
import type { AuthConfig } from "../config/types.js";
import { McplexError } from "../errors.js";
import type { ConnectLinks, ConnectTicket } from "./connect-links.js";
import { userKey } from "./user-ref.js";

/** Where the gateway's identity provider sends the browser back after signing it in for a connect link. */
export const SIGNED_IN_PATH = "/connect/-/signed-in";

/** Who an access token of the gateway's identity provider says the browser is, once the gateway verified it. */
export interface VerifiedUser {
  readonly issuer?: string;
  readonly subject: string;
}

/** Options of {@link ConnectSignIn}. */
export interface ConnectSignInOptions {
  links: ConnectLinks;
  /** The gateway's `auth:` block: its issuers, the client of `auth.dashboard`, the scopes, the resource. */
  auth: AuthConfig;
  /**
   * Checks an access token as the gateway checks a caller's (its authenticator: signature,
   * issuer, audience `resource`, expiry, access rules): who it names, or `undefined` when refused.
   */
  verify: (accessToken: string, resource: string, signal: AbortSignal) => Promise<VerifiedUser | undefined>;
  /** The `fetch` the identity provider is asked with (metadata, registration, token). Default global fetch. */
  fetch?: FetchLike;
}

/** What the identity provider's redirect brings back in `state`, sealed by the links. */
interface SignInState {
  /** What this state is for (never another sealed state's). */
  p: "sign-in";
  t: ConnectTicket;
  /** The issuer signed in at, the client, the PKCE verifier, the resource asked for. */
  i: string;
  c: string;
  k: string;
  r: string;
  /** SHA-256 of the browser's binding cookie: the browser that began is the one that finishes. */
  b: string;
}

/** The outcome of a sign-in for a connect link: who signed in, and whether they are the link's user. */
export interface LinkSignIn {
  ticket: ConnectTicket;
  signedIn: VerifiedUser;
  /** Whether the signed-in user is the one the link was made for (same issuer and subject). */
  isTicketUser: boolean;
}

/** How long discovered metadata and registered clients are kept, ms. */
const KEEP_MS = 10 * 60_000;

/**
 * Establishes who opened a connect link, before anything is stored (the MCP guidance on URL
 * elicitation: the user who completes the flow must be the one it was made for). The browser is
 * signed in at the gateway's own identity provider (the ticket's issuer): authorization code
 * with PKCE S256, `resource` = the gateway, through the client of `auth.dashboard` or, without
 * one, a client the gateway registers there (RFC 7591); the access token is then checked by the
 * gateway's authenticator and its (issuer, subject) compared with the ticket's user. `state` is
 * sealed and bound to a cookie of the browser that opened the link.
 */
export class ConnectSignIn {
  readonly #links: ConnectLinks;
  readonly #auth: AuthConfig;
  readonly #verify: ConnectSignInOptions["verify"];
  readonly #fetch: FetchLike | undefined;
  readonly #metadata = new Map<string, { at: number; metadata: AuthorizationServerMetadata }>();
  readonly #clients = new Map<string, { at: number; clientId: Promise<string> }>();

  constructor(options: ConnectSignInOptions) {
    this.#links = options.links;
    this.#auth = options.auth;
    this.#verify = options.verify;
    this.#fetch = options.fetch;
  }

  /** Where the identity provider sends the browser back. */
  redirectUrl(): string {
    return `${this.#links.base}${SIGNED_IN_PATH}`;
  }

  /**
   * The authorization URL that signs the browser in for `ticket`'s link. `browser` is the value
   * of the browser's binding cookie (the page sets it): only that browser can finish.
   */
  async begin(ticket: ConnectTicket, browser: string, signal: AbortSignal): Promise<URL> {
    const issuer = this.#issuerOf(ticket);
    const metadata = await this.#metadataOf(issuer, signal);
    const clientId = await this.#clientOf(issuer, metadata);
    const resource = this.#resource();
    const scopes = this.#auth.dashboard?.scopes ?? this.#auth.scopes;
    const { authorizationUrl, codeVerifier } = await startAuthorization(issuer, {
      metadata,
      clientInformation: { client_id: clientId },
      redirectUrl: this.redirectUrl(),
      resource,
      ...(scopes.length === 0 ? {} : { scope: scopes.join(" ") }),
    });
    const state: SignInState = {
      p: "sign-in",
      t: ticket,
      i: issuer,
      c: clientId,
      k: codeVerifier,
      r: resource,
      b: digest(browser),
    };
    authorizationUrl.searchParams.set("state", this.#links.seal(state));
    return authorizationUrl;
  }

  /**
   * Finishes the sign-in from the identity provider's redirect: the state must be sealed here
   * for this browser and not expired; the code is exchanged and the access token checked by the
   * gateway. Says who signed in, and whether that is the link's user; stores nothing.
   *
   * @throws McplexError `SIGN_IN_REQUIRED` naming what went wrong (another browser's state, a
   *   refusal at the provider, a token the gateway does not accept).
   */
  async finish(
    query: URLSearchParams,
    browser: string | undefined,
    signal: AbortSignal,
  ): Promise<LinkSignIn> {
    const state = this.#links.open<SignInState>(query.get("state"));
    if (state?.p !== "sign-in") throw notSignedIn("this answer does not belong to a sign-in begun here");
    if (browser === undefined || !sameDigest(digest(browser), state.b))
      throw notSignedIn("this sign-in was begun in another browser; open the link in the browser you use");
    if (!(state.t.expires > this.#links.now())) throw notSignedIn("the connect link has expired");
    const error = query.get("error");
    if (error !== null)
      throw notSignedIn(
        error === "access_denied"
          ? "you did not sign in at the gateway's identity provider"
          : `the identity provider answered ${error}`,
      );
    const code = query.get("code");
    if (code === null) throw notSignedIn("the identity provider sent no code");
    const metadata = await this.#metadataOf(state.i, signal);
    const iss = query.get("iss");
    let accessToken: string;
    try {
      const tokens = await exchangeAuthorization(state.i, {
        metadata,
        clientInformation: { client_id: state.c },
        authorizationCode: code,
        codeVerifier: state.k,
        redirectUri: this.redirectUrl(),
        resource: state.r,
        ...(iss === null ? {} : { iss }),
        ...(this.#fetch === undefined ? {} : { fetchFn: this.#fetch }),
      });
      accessToken = tokens.access_token;
    } catch (cause) {
      throw new McplexError(
        "SIGN_IN_REQUIRED",
        `the identity provider did not accept the sign-in (${(cause as Error).message})`,
        { hint: "Open the link again; if it keeps failing, call the tool again for a fresh link." },
        { cause },
      );
    }
    const signedIn = await this.#verify(accessToken, state.r, signal);
    if (signedIn === undefined) throw notSignedIn("the gateway does not accept this sign-in");
    return {
      ticket: state.t,
      signedIn,
      isTicketUser: userKey(signedIn.issuer, signedIn.subject) === state.t.user,
    };
  }

  /** The ticket's issuer when the gateway trusts it, else `auth.dashboard.issuer` or the first. */
  #issuerOf(ticket: ConnectTicket): string {
    const issuers = this.#auth.issuers.map((i) => i.issuer);
    if (ticket.issuer !== undefined && issuers.includes(ticket.issuer)) return ticket.issuer;
    const issuer = this.#auth.dashboard?.issuer ?? issuers[0];
    if (issuer === undefined)
      throw new McplexError("CONFIG_INVALID", "auth.issuers needs at least one authorization server", {
        path: "auth.issuers",
      });
    return issuer;
  }

  /** What the sign-in token must be for: the gateway itself (`auth.resource`, else the links' origin). */
  #resource(): string {
    return (this.#auth.resource ?? this.#links.base).replace(/\/+$/, "");
  }

  async #metadataOf(issuer: string, signal: AbortSignal): Promise<AuthorizationServerMetadata> {
    const kept = this.#metadata.get(issuer);
    if (kept !== undefined && Date.now() - kept.at < KEEP_MS) return kept.metadata;
    signal.throwIfAborted();
    let metadata: AuthorizationServerMetadata | undefined;
    try {
      metadata = await discoverAuthorizationServerMetadata(issuer, {
        ...(this.#fetch === undefined ? {} : { fetchFn: this.#fetch }),
      });
    } catch (cause) {
      throw new McplexError(
        "SIGN_IN_REQUIRED",
        `the gateway's identity provider ${issuer} could not be reached (${(cause as Error).message})`,
        { hint: "Open the link again in a moment; if it keeps failing, tell the gateway's operator." },
        { cause },
      );
    }
    if (metadata === undefined)
      throw new McplexError(
        "SIGN_IN_REQUIRED",
        `the gateway's identity provider ${issuer} publishes no metadata`,
        {
          hint: "Tell the gateway's operator: auth.issuers must name a provider with RFC 8414 or OpenID discovery.",
        },
      );
    this.#metadata.set(issuer, { at: Date.now(), metadata });
    return metadata;
  }

  /** `auth.dashboard.clientId` at its issuer; else a public client registered here once (RFC 7591). */
  async #clientOf(issuer: string, metadata: AuthorizationServerMetadata): Promise<string> {
    const dashboard = this.#auth.dashboard;
    const dashboardIssuer = dashboard?.issuer ?? this.#auth.issuers[0]?.issuer;
    if (dashboard?.clientId !== undefined && dashboardIssuer === issuer) return dashboard.clientId;
    const redirect = this.redirectUrl();
    const key = `${issuer} ${redirect}`;
    const kept = this.#clients.get(key);
    if (kept !== undefined && Date.now() - kept.at < KEEP_MS) return kept.clientId;
    if (metadata.registration_endpoint === undefined)
      throw new McplexError(
        "CONFIG_INVALID",
        `connect links sign their user in at ${issuer}, which offers no client registration`,
        {
          path: "auth.dashboard.clientId",
          hint: `Register a public client there (no secret, redirect URIs ${redirect} and the dashboard's) and set auth.dashboard.clientId.`,
        },
      );
    const clientId = registerClient(issuer, {
      metadata,
      clientMetadata: {
        client_name: "mcplex connect",
        redirect_uris: [redirect],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      },
      ...(this.#fetch === undefined ? {} : { fetchFn: this.#fetch }),
    }).then((client) => client.client_id);
    this.#clients.set(key, { at: Date.now(), clientId });
    clientId.catch(() => this.#clients.delete(key));
    try {
      return await clientId;
    } catch (cause) {
      throw new McplexError(
        "CONFIG_INVALID",
        `connect links sign their user in at ${issuer}, which refused to register a client (${(cause as Error).message})`,
        {
          path: "auth.dashboard.clientId",
          hint: `Register a public client there (no secret, redirect URI ${redirect}) and set auth.dashboard.clientId.`,
        },
        { cause },
      );
    }
  }
}

/** SHA-256 of a browser's binding, base64url: what a sealed state keeps of it. */
export function digest(browser: string): string {
  return createHash("sha256").update(browser).digest("base64url");
}

/** Whether two digests are equal, in constant time. */
export function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function notSignedIn(what: string): McplexError {
  return new McplexError("SIGN_IN_REQUIRED", `not signed in: ${what}`, {
    hint: "Open the link again to sign in; a link works for ten minutes, for the user it was made for.",
  });
}
