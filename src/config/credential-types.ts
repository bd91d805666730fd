/**
 * The shapes of how mcplex gets credentials for servers in a loaded config: a server's `oauth:`
 * (mcplex's own grant: authorization code, client credentials, workload identity, ID-JAG, DPoP),
 * its `credentials:` (whose credentials a signed-in user's calls use: shared, per-user, token
 * exchange, ID-JAG) and the top-level `users:` bounds. `types.ts` holds the rest of the config and
 * re-exports these.
 */

/** How mcplex registers and authorizes itself with a server's authorization server. */
export interface OAuthConfig {
  /** Where the authorization server sends the browser back; a loopback URL `mcplex auth login` listens on. */
  redirectUrl: string;
  /** `client_name` given at dynamic registration. */
  clientName: string;
  /** A pre-registered client; without it mcplex registers itself (metadata document or dynamic registration). */
  clientId?: string;
  clientSecret?: string;
  /** Scope to ask for when the server's challenge names none. */
  scope?: string;
  /** An https URL serving mcplex's client metadata document (used as the client id where supported). */
  clientMetadataUrl?: string;
  /**
   * `authorization_code` (default): a person approves once in a browser. `client_credentials`:
   * mcplex is the client itself, authenticated by `clientSecret` or `privateKey`; no browser.
   * `jwt-bearer`: workload identity federation (RFC 7523), the platform's JWT in `assertion`.
   * `id-jag`: enterprise-managed authorization (SEP-990), the grant asked of `idJag`'s provider.
   */
  grant: "authorization_code" | "client_credentials" | "jwt-bearer" | "id-jag";
  /** PEM private key for `private_key_jwt` client authentication (client credentials). */
  privateKey?: string;
  /** JWS algorithm of `privateKey`'s assertions. Default RS256. */
  signingAlgorithm?: string;
  /** `jwt-bearer`: where the workload's JWT is read, afresh for each token request. */
  assertion?: TokenSource;
  /** Sender-constrained tokens (DPoP, RFC 9449): a key pair kept sealed with the tokens signs a proof per request. */
  dpop?: boolean;
  /** `id-jag`: the company's identity provider, and where the user's ID token comes from. */
  idJag?: IdJagConfig;
}

/**
 * A token mcplex reads when it needs one: a file read each time (a projected service-account
 * token that rotates), a command run each time (its stdout), or a value written in the config.
 */
export type TokenSource = { file: string } | { command: string[] } | { value: string };

/** `oauth.idJag`: the identity provider that exchanges the user's ID token for an ID-JAG (RFC 8693). */
export interface IdJagConfig {
  /** The provider's token endpoint; or give `issuer` and it is discovered. */
  tokenEndpoint?: string;
  issuer?: string;
  /** mcplex's client at the identity provider. */
  clientId: string;
  clientSecret?: string;
  /** The user's ID token (from the provider's sign-in). */
  idToken: TokenSource;
}

/** A server's `credentials:` (see `ServerCommon.credentials` in types.ts). */
export type CredentialsConfig =
  | "shared"
  | "per-user"
  | { exchange: TokenExchangeConfig }
  | { idJag: IdJagCredentialsConfig };

/** `credentials: { exchange: ... }`: RFC 8693 token exchange at the user's identity provider. */
export interface TokenExchangeConfig {
  /** The `audience` asked for: what the server's tokens must name (often its URL). */
  audience: string;
  /** A `resource` indicator (RFC 8707) asked for besides, when the provider wants one. */
  resource?: string;
  /** Scopes asked for. */
  scopes?: string[];
  /**
   * The provider that exchanges: an issuer URL (discovered), default the user token's issuer.
   * Only issuers of `auth.issuers` are used.
   */
  issuer?: string;
  /** mcplex's client at that provider, for the exchange (client_secret_basic). */
  clientId: string;
  clientSecret?: string;
}

/**
 * `credentials: { idJag: ... }`: enterprise-managed authorization (SEP-990). The user's token is
 * exchanged at their identity provider for an ID-JAG (an identity assertion JWT authorization
 * grant naming the server's authorization server and the server), which mcplex then redeems at
 * the server's authorization server (RFC 7523 JWT-bearer grant) for the user's access token.
 */
export interface IdJagCredentialsConfig {
  /**
   * The identity provider that issues ID-JAGs: an issuer URL (discovered), default the user
   * token's issuer. Only issuers of `auth.issuers` are used.
   */
  issuer?: string;
  /** mcplex's client at the identity provider (client_secret_basic, or none without a secret). */
  clientId: string;
  clientSecret?: string;
  /** Scopes asked for at the server. */
  scopes?: string[];
  /**
   * What the user's token is to the identity provider: `access_token` (default, what a gateway
   * signed in with OAuth holds) or `id_token` (a provider that takes only OpenID ID tokens, with
   * callers who present one).
   */
  subjectTokenType?: "access_token" | "id_token";
  /** mcplex's client at the server's authorization server, which redeems the ID-JAG. */
  serverClientId: string;
  serverClientSecret?: string;
}

/**
 * The top-level `users:` block: bounds and idle stop of the connections (and processes) that
 * per-user servers open for each signed-in user.
 */
export interface UsersConfig {
  /** Per-user connections of all users and servers at once. Default 64. */
  maxConnections?: number;
  /** Per-user connections one user holds at once, across servers. Default 8. */
  maxPerUser?: number;
  /** A user's connection (a stdio server's process) is closed after this long without a call (ms). Default 10 minutes. */
  idleTimeout?: number;
}
