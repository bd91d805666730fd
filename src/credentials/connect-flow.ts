import { auth, type FetchLike, type StoredOAuthClientInformation } from "@modelcontextprotocol/client";
import type { OAuthConfig, RemoteServerConfig, ServerConfig } from "../config/types.js";
import { userValueProblem } from "../config/user-placeholders.js";
import { McplexError } from "../errors.js";
import { type OAuthRecord, ServerOAuthProvider } from "../upstream/oauth.js";
import type { ConnectLinks, ConnectTicket } from "./connect-links.js";
import { digest, sameDigest } from "./connect-sign-in.js";
import type { ConnectSignal } from "./connect-signal.js";
import type { CredentialVault } from "./user-credentials.js";
import { userValueNames } from "./user-value-names.js";

/** Longest value a user may set for one `${user:NAME}`. */
const MAX_VALUE_CHARS = 16 * 1024;

/** Options of {@link ConnectFlow}. */
export interface ConnectFlowOptions {
  vault: CredentialVault;
  links: ConnectLinks;
  /** Told when a user has connected, so that the call waiting for it goes on. */
  signal?: ConnectSignal;
  /** The `fetch` OAuth requests go through (discovery, registration, tokens). Default global fetch. */
  fetch?: FetchLike;
}

/** What an OAuth redirect brings back in `state`, sealed by the links (so any replica can finish). */
interface SealedState {
  /** The user key, their `sub`, the server. */
  u: string;
  s: string;
  v: string;
  /** The PKCE code verifier. */
  k: string;
  /** The authorization server and the protected-resource metadata it was found through. */
  a: string;
  r?: string;
  /** Expiry (ms since the epoch), and the link's nonce: what it stores, it stores once. */
  e: number;
  n: string;
  /** SHA-256 of the binding cookie of the browser that signed in as the user. */
  b: string;
  /** The client mcplex is at the authorization server for this user (registered on the way). */
  c?: StoredOAuthClientInformation;
}

/** What the form of values posts back, sealed: the link's ticket, for the browser that signed in through it. */
interface ValuesGrant {
  p: "values";
  t: ConnectTicket;
  b: string;
}

/** Who a finished connect was for. */
export interface Connected {
  user: string;
  subject: string;
  server: string;
}

/**
 * Connects a user's own account of a per-user server, for the `/connect/<server>` pages, once
 * the browser has signed in as the user the ticket names (`ConnectSignIn`): the server's OAuth
 * (the SDK's `auth()`: discovery, registration or client ID metadata document, PKCE, the
 * `resource` indicator) begun for that user and finished by the redirect back, its tokens
 * stored in the vault under that user only; or the values of a server's `${user:NAME}`
 * placeholders, from a form. Both are bound to the browser that signed in (its cookie's
 * digest, sealed in the state or the form) and store once per link.
 */
export class ConnectFlow {
  readonly #vault: CredentialVault;
  readonly #links: ConnectLinks;
  readonly #signal: ConnectSignal | undefined;
  readonly #fetch: FetchLike | undefined;

  constructor(options: ConnectFlowOptions) {
    this.#vault = options.vault;
    this.#links = options.links;
    this.#signal = options.signal;
    this.#fetch = options.fetch;
  }

  /** What the server's connect page asks for: a form of values, or the server's OAuth. */
  kind(server: ServerConfig): "values" | "oauth" | undefined {
    if (server.credentials !== "per-user") return undefined;
    if (userValueNames(server).length > 0) return "values";
    if (server.transport === "streamable-http" || server.transport === "sse") return "oauth";
    return undefined;
  }

  /**
   * Begins the server's OAuth for the ticket's user, whose browser (`browser`: its binding
   * cookie) signed in as them: resolves with the authorization URL to send the browser to (its
   * `state` sealed: the user, the PKCE verifier, the authorization server, the browser).
   */
  async begin(ticket: ConnectTicket, server: RemoteServerConfig, browser: string): Promise<URL> {
    // Nothing is stored before tokens come back: a connect the user abandons or refuses leaves no
    // record (the client registered on the way travels in the sealed state). A client
    // registered at an earlier connect is used again.
    let pending: OAuthRecord = {};
    const earlier = (await this.#vault.get(ticket.user, server.name))?.oauth?.client;
    if (earlier !== undefined) pending.client = earlier;
    const provider = new RedirectingProvider(server.name, this.#oauthConfig(server), {
      store: {
        load: async () => pending,
        save: async (_server, record) => {
          pending = record;
        },
      },
    });
    const serverUrl = new URL(server.url);
    // The user asked to connect: a new grant, whatever is stored.
    let result: Awaited<ReturnType<typeof auth>>;
    try {
      result = await auth(provider, {
        serverUrl,
        forceReauthorization: true,
        ...(this.#fetch === undefined ? {} : { fetchFn: this.#fetch }),
      });
    } catch (cause) {
      // Discovery or registration failed: no token exists yet, so the cause can be told.
      throw new McplexError(
        "UPSTREAM_UNAUTHORIZED",
        `${server.name}: its sign-in could not be started (${(cause as Error).message})`,
        {
          server: server.name,
          hint: "Try the link again in a moment; if it keeps failing, tell the gateway's operator.",
        },
        { cause },
      );
    }
    const url = provider.authorizationUrl;
    const discovery = provider.discoveryState();
    if (result !== "REDIRECT" || url === undefined || discovery === undefined)
      throw new McplexError(
        "UPSTREAM_UNAUTHORIZED",
        `${server.name}: the server's OAuth gave no authorization URL`,
        {
          server: server.name,
        },
      );
    const state: SealedState = {
      u: ticket.user,
      s: ticket.subject,
      v: server.name,
      k: provider.codeVerifier(),
      a: discovery.authorizationServerUrl,
      ...(discovery.resourceMetadataUrl === undefined ? {} : { r: discovery.resourceMetadataUrl }),
      e: ticket.expires,
      n: ticket.nonce,
      b: digest(browser),
      ...(pending.client === undefined ? {} : { c: pending.client }),
    };
    url.searchParams.set("state", this.#links.seal(state));
    return url;
  }

  /**
   * Finishes a connect from the authorization server's redirect: checks `state`, exchanges the
   * code, stores the tokens under the user the state names, and tells who waits.
   *
   * @throws McplexError `UPSTREAM_UNAUTHORIZED` naming what went wrong (the server's `error`, a
   *   state that is not ours or has expired, a refused code).
   */
  async finish(
    server: RemoteServerConfig,
    query: URLSearchParams,
    browser: string | undefined,
  ): Promise<Connected> {
    const state = this.#links.open<SealedState>(query.get("state"));
    if (state === undefined || state.v !== server.name || typeof state.b !== "string")
      throw refused(server.name, "this answer does not belong to a connect begun here");
    // The browser that signed in as the user, not one the authorization URL was passed to.
    if (browser === undefined || !sameDigest(digest(browser), state.b))
      throw refused(
        server.name,
        "this answer comes to another browser than the one that signed in for the link",
      );
    if (!(state.e > this.#links.now())) throw refused(server.name, "this connect took too long");
    const error = query.get("error");
    if (error !== null) {
      const description = query.get("error_description");
      const what =
        error === "access_denied"
          ? "access was not granted"
          : `the authorization server answered ${error}${description ? `: ${description}` : ""}`;
      throw refused(server.name, what);
    }
    const code = query.get("code");
    if (code === null) throw refused(server.name, "the authorization server sent no code");
    // What the exchange gives is kept aside until it succeeds: a failed or replayed callback
    // (the SDK drops the tokens it holds on invalid_grant) must not touch the user's stored grant.
    let pending: OAuthRecord = state.c === undefined ? {} : { client: state.c };
    const provider = new ServerOAuthProvider(server.name, this.#oauthConfig(server), {
      store: {
        load: async () => pending,
        save: async (_name, record) => {
          pending = record;
        },
      },
    });
    provider.saveCodeVerifier(state.k);
    provider.saveDiscoveryState({
      authorizationServerUrl: state.a,
      ...(state.r === undefined ? {} : { resourceMetadataUrl: state.r }),
    });
    const iss = query.get("iss");
    try {
      const result = await auth(provider, {
        serverUrl: new URL(server.url),
        authorizationCode: code,
        ...(iss === null ? {} : { iss }),
        ...(this.#fetch === undefined ? {} : { fetchFn: this.#fetch }),
      });
      if (result !== "AUTHORIZED" || pending.tokens === undefined)
        throw new Error("no tokens were issued for the code");
    } catch (cause) {
      throw new McplexError(
        "UPSTREAM_UNAUTHORIZED",
        `${server.name}: the authorization server did not accept the code (${(cause as Error).message})`,
        { server: server.name, hint: "Call the tool again for a fresh link, and connect again." },
        { cause },
      );
    }
    const ticket = { user: state.u, subject: state.s, server: state.v, expires: state.e, nonce: state.n };
    if (!(await this.#links.use(ticket, "stored")))
      throw refused(server.name, "this link has already connected an account");
    const current = await this.#vault.get(state.u, server.name);
    await this.#vault.put(state.u, server.name, {
      ...current,
      oauth: pending,
      connectedAt: Date.now(),
      subject: state.s,
    });
    this.#signal?.notify(state.u, server.name);
    return { user: state.u, subject: state.s, server: server.name };
  }

  /** What the form of values carries back (sealed): `ticket`, for the browser that signed in as its user. */
  valuesGrant(ticket: ConnectTicket, browser: string): string {
    const grant: ValuesGrant = { p: "values", t: ticket, b: digest(browser) };
    return this.#links.seal(grant);
  }

  /**
   * Stores the values of the server's `${user:NAME}` placeholders for the user of `grant`
   * ({@link valuesGrant}), when `browser` is the one it was made for; once per link.
   *
   * @throws McplexError `INVALID_ARGUMENT` when the grant is not this browser's or has expired,
   *   the link already stored values, or a name is missing, unknown, empty or too long.
   */
  async saveValues(
    grant: string | null,
    browser: string | undefined,
    server: ServerConfig,
    given: URLSearchParams,
  ): Promise<void> {
    const opened = this.#links.open<ValuesGrant>(grant);
    if (opened?.p !== "values" || opened.t.server !== server.name)
      throw new McplexError(
        "INVALID_ARGUMENT",
        `${server.name}: this form was not made here; open the link again`,
        {
          server: server.name,
        },
      );
    if (browser === undefined || !sameDigest(digest(browser), opened.b))
      throw new McplexError(
        "INVALID_ARGUMENT",
        `${server.name}: this form was sent from another browser than the one that signed in for the link`,
        { server: server.name, hint: "Open the link in your own browser, sign in, and fill the form there." },
      );
    const ticket = opened.t;
    if (!(ticket.expires > this.#links.now()))
      throw new McplexError("INVALID_ARGUMENT", `${server.name}: this connect link has expired`, {
        server: server.name,
        hint: "Call the tool again for a fresh link.",
      });
    const values: Record<string, string> = {};
    for (const name of userValueNames(server)) {
      const value = given.get(name);
      if (value === null || value === "")
        throw new McplexError("INVALID_ARGUMENT", `${server.name}: ${name} is needed`, {
          server: server.name,
          hint: "Fill in every field.",
        });
      if (value.length > MAX_VALUE_CHARS)
        throw new McplexError(
          "INVALID_ARGUMENT",
          `${server.name}: ${name} is longer than ${MAX_VALUE_CHARS} characters`,
          {
            server: server.name,
          },
        );
      // Said at once, where the user can fix it: the launch would refuse it too.
      const problem = server.transport === "stdio" ? userValueProblem(server.args, name, value) : undefined;
      if (problem !== undefined)
        throw new McplexError("INVALID_ARGUMENT", `${server.name}: ${problem}`, {
          server: server.name,
          hint: `Give ${name} a value that does not start with "-".`,
        });
      values[name] = value;
    }
    if (!(await this.#links.use(ticket, "stored")))
      throw new McplexError("INVALID_ARGUMENT", `${server.name}: this link has already saved values`, {
        server: server.name,
        hint: "Call the tool again for a fresh link.",
      });
    const current = await this.#vault.get(ticket.user, server.name);
    await this.#vault.put(ticket.user, server.name, {
      ...current,
      values,
      connectedAt: Date.now(),
      subject: ticket.subject,
    });
    this.#signal?.notify(ticket.user, server.name);
  }

  /** The server's `oauth:` (or mcplex's defaults) with the redirect to this gateway's callback page. */
  #oauthConfig(server: RemoteServerConfig): OAuthConfig {
    if (server.oauth?.grant === "client_credentials")
      throw new McplexError(
        "CONFIG_INVALID",
        `${server.name}: credentials: per-user needs the authorization_code grant, not client_credentials`,
        { server: server.name, path: `servers.${server.name}.oauth.grant` },
      );
    return {
      grant: "authorization_code",
      clientName: "mcplex",
      ...server.oauth,
      redirectUrl: this.#links.callbackUrl(server.name),
    };
  }
}

/** A provider whose authorization URL is kept for the page to redirect to, instead of asked about. */
class RedirectingProvider extends ServerOAuthProvider {
  authorizationUrl: URL | undefined;

  override async redirectToAuthorization(url: URL): Promise<void> {
    this.authorizationUrl = url;
  }
}

/** A connect that cannot finish: what happened, and that a fresh link starts over. */
function refused(server: string, what: string): McplexError {
  return new McplexError("UPSTREAM_UNAUTHORIZED", `${server}: ${what}`, {
    server,
    hint: "Call the tool again for a fresh link, and connect again.",
  });
}
