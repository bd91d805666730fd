import type { CatalogMode } from "../config/types.js";

/**
 * Who a request comes from, as the front's `Authenticator` decided at admission. It rides on the
 * request (`RequestContext.identity`), and everything after keys on it: profiles, limits,
 * caches, parked calls.
 */
export interface Identity {
  /**
   * The key limits, caches, sessions, tasks and parked calls are kept under: `token#0` for a
   * static token (never the token itself), the client's address when no credential is asked
   * for, and for an OAuth caller its principal, issuer and subject together (`user:<digest>`,
   * or `client:<digest>` of issuer and client for a token without `sub`).
   */
  readonly key: string;
  /** How it was established: a static token, nothing asked (loopback), or an OAuth access token. */
  readonly via: "token" | "anonymous" | "oauth";
  /**
   * The signed-in user, for audit lines and spans (`enduser.id`): the access token's `sub`.
   * Absent for static tokens and anonymous callers. Never a metric label.
   */
  readonly subject?: string;
  /** The issuer that vouched for {@link subject} (`iss`). */
  readonly issuer?: string;
  /** The OAuth client the user signed in with (`client_id` or `azp`), when the token names it. */
  readonly client?: string;
  /** The scopes the access token grants (`scope`), for per-tool scope checks. */
  readonly scopes?: readonly string[];
  /** The groups the token names (where `auth.claims.groups` says), for policies. */
  readonly groups?: readonly string[];
  /** The token's email address, when it is one valid address (verified or not: see {@link emailVerified}). */
  readonly email?: string;
  /** Whether the issuer says it verified {@link email}. */
  readonly emailVerified?: boolean;
  /**
   * Every claim of the verified token, for policies (`caller.claims`). Not enumerable where the
   * authenticator sets it, so no JSON or log line of the identity carries them.
   */
  readonly claims?: Readonly<Record<string, unknown>>;
  /**
   * When the credential stops being valid (ms since the epoch): a connection it opened (`/ws`,
   * an SSE stream) is closed then, and the client reconnects with a fresh one.
   */
  readonly expiresAt?: number;
  /** The catalog view it may see; absent: the front's default (everything without one). */
  readonly profile?: string;
  /** How it sees the tools, when its credential says (a token's `mode`). */
  readonly mode?: CatalogMode;
  /** Whether it may read the operator endpoints (`/metrics`, `/readyz`) and act on servers. */
  readonly operator: boolean;
  /**
   * The OAuth access token it was admitted with (`via: "oauth"` only), read only to exchange it
   * for a server's token (RFC 8693, `credentials: { exchange }`). A function (and a property
   * that is not enumerable where the authenticator sets it), so that no JSON, log line or error
   * made of an identity carries the token; never sent upstream as it is.
   */
  readonly accessToken?: () => string;
}
