import type { ServerConfig } from "../config/types.js";
import { McplexError } from "../errors.js";
import type { OAuthHost, OAuthRecord } from "../upstream/oauth.js";

/**
 * The signed-in user a per-user server is called for (`credentials:` other than shared): made
 * from the request's `Identity` when it came `via: "oauth"`. Callers with static tokens, stdio
 * and library callers have none, and a per-user server refuses them (sign-in needed).
 */
export interface UserRef {
  /**
   * What everything per user is kept under (connections, processes, the vault, caches, parked
   * calls): a digest of the issuer and the subject, never the token. Two issuers' equal `sub`
   * are two users.
   */
  readonly key: string;
  /** The token's `sub`, for messages meant for that user and the audit trail. */
  readonly subject: string;
  /** The token's `iss`. */
  readonly issuer?: string;
  /**
   * The caller's own access token, read only to exchange it (RFC 8693) for a token of a server
   * that trusts the same provider. A function, so that the token is in no JSON, log or error made
   * of a `UserRef`. Never sent to a server as it is.
   */
  readonly subjectToken?: () => string;
}

/** What one user holds for one server, kept in the {@link CredentialVault}. */
export interface UserServerRecord {
  /** The server's OAuth client registration and the user's tokens (per-user OAuth). */
  oauth?: OAuthRecord;
  /** The values of the server's `${user:NAME}` placeholders, as the user set them. */
  values?: Record<string, string>;
  /** When the user connected (ms since the epoch). */
  connectedAt: number;
  /** The user's `sub` ({@link UserRef.subject}), so that an operator revoking sees who (the vault is keyed by digest). */
  subject?: string;
}

/**
 * Per-(user, server) credentials, encrypted at rest (a file beside the secret store; Redis with
 * `cluster:`). Every method names the user by {@link UserRef.key}.
 */
export interface CredentialVault {
  get(user: string, server: string): Promise<UserServerRecord | undefined>;
  put(user: string, server: string, record: UserServerRecord): Promise<void>;
  /** Deletes the user's record for `server`, or all of the user's; resolves with the servers deleted. */
  delete(user: string, server?: string): Promise<string[]>;
  /** The servers the user holds a record for. */
  servers(user: string): Promise<string[]>;
  /** The users holding a record (for the operator's revoke). */
  users(): Promise<string[]>;
  /**
   * Runs `run` while no other holder of the vault (a replica) runs one for the same (user,
   * server): a rotating refresh token is then spent once across replicas.
   */
  exclusive<T>(user: string, server: string, run: () => Promise<T>): Promise<T>;
}

/** How one user's connection to one server is made (what a {@link UserCredentialSource} gives). */
export interface UserConnectionPlan {
  /** Values of the server's `${user:NAME}` placeholders (a stdio server's env and args, a remote's headers). */
  values?: Record<string, string>;
  /** A bearer token for every HTTP request to a remote server, asked before each request (the source caches it). */
  bearer?: (signal?: AbortSignal) => Promise<string>;
  /** The user's own OAuth grant for a remote server (per-user OAuth): the host its `ServerOAuthProvider` uses. */
  oauth?: OAuthHost;
}

/**
 * Gives a user's connection plan for a server that is not `shared`. Throws
 * {@link ConnectRequiredError} when the user must connect first, and a `McplexError`
 * `TOKEN_EXCHANGE_FAILED` when an exchange is refused: never a plan with another's credentials.
 */
export interface UserCredentialSource {
  plan(user: UserRef, server: ServerConfig, signal?: AbortSignal): Promise<UserConnectionPlan>;
}

/**
 * A per-user server the user has not connected yet: the call cannot go on until the user opens
 * `url` (mcplex's `/connect/<server>` page) and connects. The gateway turns it into a URL-mode
 * elicitation where the client takes one, and into a tool error carrying the URL otherwise.
 */
export class ConnectRequiredError extends McplexError {
  readonly url: string;
  constructor(server: string, url: string, message?: string) {
    super(
      "CONNECT_REQUIRED",
      message ?? `${server}: connect your account first, at ${url}; then call again`,
      { server, hint: `Open ${url} in a browser, connect, and call again.` },
    );
    this.url = url;
  }
}

/** A per-user server called by a caller who did not sign in (a static token, stdio, the library). */
export function signInRequired(server: ServerConfig): McplexError {
  return new McplexError(
    "SIGN_IN_REQUIRED",
    `${server.name}: this server is called with each user's own credentials (credentials: ${
      typeof server.credentials === "string"
        ? server.credentials
        : "exchange" in (server.credentials ?? {})
          ? "exchange"
          : "idJag"
    }); sign in to the gateway with OAuth to call it`,
    {
      server: server.name,
      hint: "Connect to the gateway with a signed-in OAuth token (see the README's Sign-in); static tokens and stdio use the shared servers only.",
    },
  );
}
