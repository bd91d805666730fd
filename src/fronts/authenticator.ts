import type { IncomingHttpHeaders } from "node:http";
import { tokenProblem } from "../config/token-rules.js";
import type { TokenConfig } from "../config/types.js";
import { McplexError } from "../errors.js";
import type { Identity } from "../hub/call-pipeline.js";
import { authenticate } from "./bearer-auth.js";

export type { Identity };

/** What an {@link Authenticator} is shown of a request: its headers and where it came from. */
export interface AuthRequest {
  readonly headers: IncomingHttpHeaders;
  readonly remoteAddress: string | undefined;
  /** The path asked for, without its query (`/mcp`, `/sse`, `/messages`, `/ws`, `/dashboard/api/...`). */
  readonly path?: string;
  /** Set when the request carries several `Authorization` headers (`headers` holds the first). */
  readonly repeatedAuthorization?: true;
}

/** A request turned away by an {@link Authenticator}: 401 with a challenge, or 403. */
export interface AuthRefusal {
  readonly status: 401 | 403;
  readonly message: string;
  readonly wwwAuthenticate?: string;
}

/** The outcome of {@link Authenticator.authenticate}. */
export type AuthOutcome =
  | { readonly ok: true; readonly identity: Identity }
  | ({ readonly ok: false } & AuthRefusal);

/**
 * Decides who is calling, once per HTTP request or WebSocket upgrade, for every entry of the
 * HTTP front (`/mcp`, `/sse` and `/messages`, `/ws`, the dashboard and its actions, `/metrics`,
 * `/readyz`). Asynchronous, so an implementation may look keys up (JWKS) or ask an issuer
 * (introspection); it answers a refusal for a bad credential rather than throwing.
 *
 * @example
 * const auth: Authenticator = {
 *   required: true,
 *   async authenticate({ headers }) {
 *     const user = await lookUp(headers.authorization);
 *     return user === undefined
 *       ? { ok: false, status: 401, message: "Unauthorized", wwwAuthenticate: 'Bearer realm="mcplex"' }
 *       : { ok: true, identity: { key: `user:${user.id}`, via: "token", operator: false } };
 *   },
 * };
 */
export interface Authenticator {
  /** Whether callers must present a credential (a non-loopback address needs one). */
  readonly required: boolean;
  authenticate(request: AuthRequest, signal?: AbortSignal): Promise<AuthOutcome>;
  /**
   * The static tokens it accepts, replaceable while serving (a reloaded config's `tokens:`);
   * absent when it takes none.
   */
  readonly statics?: StaticTokenAuthenticator;
  /**
   * A document it publishes at `/.well-known/<name><suffix>` (OAuth protected-resource
   * metadata, RFC 9728: `name` is `oauth-protected-resource`, `suffix` the endpoint's path or
   * ""), or `undefined` for none. Public: served without a credential, to any origin.
   */
  wellKnown?(name: string, suffix: string, request: AuthRequest): Record<string, unknown> | undefined;
  /**
   * Told once the front listens: the origins it is reached at (`http://127.0.0.1:8420`, and
   * `http://localhost:8420` on loopback), for an authenticator whose tokens must name the
   * gateway (their audience) and that has no configured URL of it. Never a request's Host.
   */
  bound?(origins: readonly string[]): void;
  /**
   * The `WWW-Authenticate` value of a 403 for a caller whose token lacks `scope`
   * (space-separated): the challenge a client steps up with.
   */
  insufficientScope?(request: AuthRequest, scope: string): string;
}

/**
 * The static bearer tokens of the config (`tokens:`, `--token`): each bound to a profile, a
 * mode and operator rights; none configured lets everyone in as the operator, keyed by address.
 * The tokens can be replaced while serving (a reloaded config).
 */
export class StaticTokenAuthenticator implements Authenticator {
  #tokens: readonly TokenConfig[];

  /** @throws McplexError naming the entry (never the token) of a token too weak to protect anything. */
  constructor(tokens: readonly TokenConfig[]) {
    checkTokens(tokens, "");
    this.#tokens = tokens;
  }

  get required(): boolean {
    return this.#tokens.length > 0;
  }

  get statics(): StaticTokenAuthenticator {
    return this;
  }

  /** The tokens now in force. */
  get tokens(): readonly TokenConfig[] {
    return this.#tokens;
  }

  /** Replaces the tokens; refused (the old ones stay) when one is weak. */
  setTokens(next: readonly TokenConfig[]): void {
    checkTokens(next, "tokens not changed: ");
    this.#tokens = next;
  }

  async authenticate(request: AuthRequest): Promise<AuthOutcome> {
    return this.authenticateNow(request);
  }

  /** {@link authenticate}, answered at once: static tokens need no look-up. */
  authenticateNow(request: AuthRequest): AuthOutcome {
    const tokens = this.#tokens;
    const auth = authenticate(request.headers.authorization, tokens);
    if (!auth.ok)
      return { ok: false, status: 401, message: auth.message, wwwAuthenticate: auth.wwwAuthenticate };
    if (auth.token === undefined) {
      // Without tokens (loopback only) everyone is the operator, as before tokens existed.
      return {
        ok: true,
        identity: { key: request.remoteAddress ?? "unknown", via: "anonymous", operator: true },
      };
    }
    const entry = tokens[auth.token.index]!;
    const identity: { -readonly [K in keyof Identity]: Identity[K] } = {
      key: auth.token.key,
      via: "token",
      operator: entry.profile === undefined || entry.operator === true,
    };
    if (entry.profile !== undefined) identity.profile = entry.profile;
    if (entry.mode !== undefined) identity.mode = entry.mode;
    return { ok: true, identity };
  }
}

/** Refuses tokens too weak to protect anything, naming the entry (never the token). */
function checkTokens(tokens: readonly TokenConfig[], prefix: string): void {
  tokens.forEach(({ token }, i) => {
    const problem = tokenProblem(token);
    if (problem !== undefined)
      throw new McplexError("INVALID_ARGUMENT", `${prefix}tokens[${i}].token ${problem}`, {
        path: `tokens[${i}].token`,
      });
  });
}

/** The longest delay a timer takes (about 24.8 days); later expiries are checked again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls `expire` when the credential of `identity` stops being valid, for what lives longer
 * than one request (a `/ws` connection, an SSE stream); returns what cancels it. Nothing
 * happens for credentials without an expiry (static tokens).
 */
export function onExpiry(identity: Identity | undefined, expire: () => void): () => void {
  const at = identity?.expiresAt;
  if (at === undefined) return () => {};
  let timer: NodeJS.Timeout;
  const arm = () => {
    const left = at - Date.now();
    timer = setTimeout(left > MAX_TIMER_MS ? arm : expire, Math.max(0, Math.min(left, MAX_TIMER_MS)));
    timer.unref();
  };
  arm();
  return () => clearTimeout(timer);
}
