import type { IncomingMessage } from "node:http";
import type { CatalogMode } from "../catalog-modes/catalog-mode.js";
import { tokenProblem } from "../config/token-rules.js";
import type { TokenConfig } from "../config/types.js";
import { McplexError } from "../errors.js";
import { authenticate } from "./bearer-auth.js";
import {
  checkHostAndOrigin,
  checkNonLoopbackBind,
  defaultGuardPolicy,
  type GuardPolicy,
} from "./http-guard.js";
import { RateLimiter } from "./rate-limiter.js";
import type { Caller } from "./rev2026-post.js";

/** Why a request was turned away. */
export interface Refusal {
  status: number;
  message: string;
  headers: Record<string, string>;
}

/** A caller let in: its rate-limit key, whether it is the operator, and its profile. */
export type Admitted = Caller & { key: string; operator: boolean };

/**
 * Who may use the HTTP front: the Host/Origin policy, the bearer tokens (replaceable while
 * serving) and the rate limit per token, applied alike to /mcp, /ws, /sse, the dashboard and
 * the operator endpoints.
 */
export class HttpAdmission {
  readonly #host: string;
  readonly #guard: GuardPolicy | undefined;
  readonly #allowedOrigins: readonly string[];
  readonly #rate: RateLimiter | undefined;
  readonly #profile: string | undefined;
  readonly #mode: CatalogMode | undefined;
  #tokens: TokenConfig[];
  #policy: GuardPolicy;

  constructor(options: {
    host: string;
    port: number;
    tokens: TokenConfig[];
    guard?: GuardPolicy;
    allowedOrigins?: readonly string[];
    profile?: string;
    mode?: CatalogMode;
    rateLimit?: { perSecond: number; burst: number };
  }) {
    this.#host = options.host;
    this.#guard = options.guard;
    this.#allowedOrigins = options.allowedOrigins ?? [];
    this.#profile = options.profile;
    this.#mode = options.mode;
    checkTokens(options.tokens, "");
    const refusal = checkNonLoopbackBind(options.host, options.tokens.length);
    if (refusal !== undefined)
      throw new McplexError("INVALID_ARGUMENT", refusal, { hint: "add --token, or bind 127.0.0.1" });
    this.#tokens = options.tokens;
    this.#rate =
      options.rateLimit === undefined
        ? undefined
        : new RateLimiter({ ratePerSecond: options.rateLimit.perSecond, burst: options.rateLimit.burst });
    this.#policy = this.#policyFor(options.port);
  }

  /** Whether callers must present a token. */
  get authenticated(): boolean {
    return this.#tokens.length > 0;
  }

  /** The port is known once the server listens (0 picks one): the Host check follows it. */
  listening(port: number): void {
    this.#policy = this.#policyFor(port);
  }

  /**
   * Replaces the tokens (a reloaded config). Refused, leaving the old ones, when one is weak
   * or when none would be left on a non-loopback address.
   */
  setTokens(next: TokenConfig[]): void {
    checkTokens(next, "tokens not changed: ");
    const refused = checkNonLoopbackBind(this.#host, next.length);
    if (refused !== undefined)
      throw new McplexError("INVALID_ARGUMENT", `tokens not changed: ${refused}`, {
        hint: "keep at least one token while serving on this address",
      });
    this.#tokens = next;
  }

  /** The Host/Origin check alone (pages and liveness), or why it fails. */
  checkPage(req: IncomingMessage): Refusal | undefined {
    const hostCheck = checkHostAndOrigin(req.headers, this.#policy);
    return hostCheck.ok ? undefined : { status: hostCheck.status, message: hostCheck.message, headers: {} };
  }

  /**
   * Guards every /mcp and /ws request: the caller, or why it is refused. A request another
   * replica forwarded (`from: "replica"`, its replica credential verified) passed the
   * Host/Origin check where it entered; it now names this replica as Host, so its browser's
   * Origin is not checked again (the token is).
   */
  admit(req: IncomingMessage, limited = true, from: "client" | "replica" = "client"): Admitted | Refusal {
    const page = from === "replica" ? undefined : this.checkPage(req);
    if (page !== undefined) return page;
    const tokens = this.#tokens;
    const auth = authenticate(req.headers.authorization, tokens);
    if (!auth.ok)
      return {
        status: auth.status,
        message: auth.message,
        headers: { "www-authenticate": auth.wwwAuthenticate },
      };
    const key = auth.token?.key ?? req.socket.remoteAddress ?? "unknown";
    if (limited) {
      const refused = this.takeRate(key);
      if (refused !== undefined) return refused;
    }
    const profile = auth.profile ?? this.#profile;
    // Without tokens (loopback only) everyone is the operator, as before tokens existed.
    const operator =
      tokens.length === 0 ||
      profile === undefined ||
      (auth.token !== undefined && tokens[auth.token.index]?.operator === true);
    const mode = (auth.token === undefined ? undefined : tokens[auth.token.index]?.mode) ?? this.#mode;
    return {
      key,
      operator,
      sseAllowed: true,
      ...(profile === undefined ? {} : { profile }),
      ...(mode === undefined ? {} : { mode }),
    };
  }

  /** Takes one request of `key` from this front's own rate limit, or says why it may not. */
  takeRate(key: string): Refusal | undefined {
    const taken = this.#rate?.take(key);
    return taken === undefined || taken.ok ? undefined : rateRefusal(taken.retryAfterSeconds);
  }

  /**
   * Guards /metrics and /readyz: they name every server with its state and errors, so a token
   * bound to a profile (which must not learn of servers outside it) needs `operator: true`.
   */
  admitOperator(req: IncomingMessage, path: string): Refusal | undefined {
    const caller = this.admit(req, false);
    if ("status" in caller) return caller;
    if (caller.operator) return undefined;
    return {
      status: 403,
      message:
        `Forbidden: ${path} is an operator endpoint and this token is bound to a profile; ` +
        "use a token bound to no profile, or mark this one `operator: true` in the config's tokens",
      headers: {},
    };
  }

  #policyFor(port: number): GuardPolicy {
    return (
      this.#guard ??
      defaultGuardPolicy(this.#host, port, {
        tokens: this.#tokens.length,
        allowedOrigins: this.#allowedOrigins,
      })
    );
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

/** The answer to a caller past its rate limit. */
export function rateRefusal(retryAfterSeconds: number): Refusal {
  return {
    status: 429,
    message: `Too Many Requests: retry in ${retryAfterSeconds} s`,
    headers: { "retry-after": String(retryAfterSeconds) },
  };
}
