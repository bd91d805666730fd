import type { IncomingMessage } from "node:http";
import type { CatalogMode } from "../catalog-modes/catalog-mode.js";
import type { TokenConfig } from "../config/types.js";
import { McplexError } from "../errors.js";
import {
  type Authenticator,
  type AuthOutcome,
  type AuthRequest,
  StaticTokenAuthenticator,
} from "./authenticator.js";
import type { AdmissionRefusal, Admitted } from "./caller.js";
import type { ClusterLink } from "./cluster-link.js";
import {
  checkHostAndOrigin,
  checkNonLoopbackBind,
  defaultGuardPolicy,
  type GuardPolicy,
} from "./http-guard.js";
import { RateLimiter } from "./rate-limiter.js";

export type { AdmissionRefusal, Admitted } from "./caller.js";

/**
 * Who may use the HTTP front: the Host/Origin policy, the {@link Authenticator} (the config's
 * static tokens unless another is given; their tokens replaceable while serving) and the rate
 * limit per caller, applied alike to /mcp, /sse and /messages, /ws, the dashboard and the
 * operator endpoints.
 */
export class HttpAdmission {
  readonly #host: string;
  readonly #guard: GuardPolicy | undefined;
  readonly #allowedOrigins: readonly string[];
  readonly #rate: RateLimiter | undefined;
  readonly #rateLimit: { perSecond: number; burst: number } | undefined;
  readonly #profile: string | undefined;
  readonly #mode: CatalogMode | undefined;
  readonly #authenticator: Authenticator;
  /** The cluster this front's replica is one of, if any: its requests' credentials and shared rate. */
  readonly #cluster: ClusterLink | undefined;
  #policy: GuardPolicy;

  constructor(options: {
    host: string;
    port: number;
    tokens: TokenConfig[];
    /** Decides who is calling; default: the static `tokens`. */
    authenticator?: Authenticator;
    guard?: GuardPolicy;
    allowedOrigins?: readonly string[];
    profile?: string;
    mode?: CatalogMode;
    rateLimit?: { perSecond: number; burst: number };
    /** One replica of several: see {@link admitClient}. */
    cluster?: ClusterLink;
  }) {
    this.#host = options.host;
    this.#guard = options.guard;
    this.#allowedOrigins = options.allowedOrigins ?? [];
    this.#profile = options.profile;
    this.#mode = options.mode;
    this.#cluster = options.cluster;
    this.#authenticator = options.authenticator ?? new StaticTokenAuthenticator(options.tokens);
    const refusal = checkNonLoopbackBind(options.host, this.#authenticator.required ? 1 : 0);
    if (refusal !== undefined)
      throw new McplexError("INVALID_ARGUMENT", refusal, { hint: "add --token, or bind 127.0.0.1" });
    this.#rateLimit = options.rateLimit;
    this.#rate =
      options.rateLimit === undefined
        ? undefined
        : new RateLimiter({ ratePerSecond: options.rateLimit.perSecond, burst: options.rateLimit.burst });
    this.#policy = this.#policyFor(options.port);
  }

  /** Whether callers must present a credential. */
  get authenticated(): boolean {
    return this.#authenticator.required;
  }

  /** The port is known once the server listens (0 picks one): the Host check follows it. */
  listening(port: number): void {
    this.#policy = this.#policyFor(port);
  }

  /**
   * Replaces the static tokens (a reloaded config). Refused, leaving the old ones, when one is
   * weak, when none would be left on a non-loopback address, or when the front authenticates
   * some other way.
   */
  setTokens(next: TokenConfig[]): void {
    const statics = this.#authenticator.statics;
    if (statics === undefined)
      throw new McplexError("INVALID_ARGUMENT", "tokens not changed: this front does not use static tokens");
    // Another way of signing in (OAuth) keeps a non-loopback address guarded without tokens.
    const refused =
      this.#authenticator === statics ? checkNonLoopbackBind(this.#host, next.length) : undefined;
    if (refused !== undefined)
      throw new McplexError("INVALID_ARGUMENT", `tokens not changed: ${refused}`, {
        hint: "keep at least one token while serving on this address",
      });
    statics.setTokens(next);
  }

  /** A document the authenticator publishes at `/.well-known/<name><suffix>`, if any (see `Authenticator.wellKnown`). */
  wellKnown(name: string, suffix: string, req: IncomingMessage): Record<string, unknown> | undefined {
    return this.#authenticator.wellKnown?.(name, suffix, {
      headers: req.headers,
      remoteAddress: req.socket.remoteAddress,
      path: pathOf(req),
    });
  }

  /** The Host/Origin check alone (pages and liveness), or why it fails. */
  checkPage(req: IncomingMessage): AdmissionRefusal | undefined {
    const hostCheck = checkHostAndOrigin(req.headers, this.#policy);
    return hostCheck.ok ? undefined : { status: hostCheck.status, message: hostCheck.message, headers: {} };
  }

  /**
   * Guards every request that reaches MCP, the dashboard's data or an operator endpoint: the
   * caller, or why it is refused. The {@link Authenticator} is asked once per request (or
   * WebSocket upgrade). A request another replica forwarded (`from: "replica"`, its replica
   * credential verified) passed the Host/Origin check where it entered; it now names this
   * replica as Host, so its browser's Origin is not checked again (the credential is).
   */
  async admit(
    req: IncomingMessage,
    limited = true,
    from: "client" | "replica" = "client",
  ): Promise<Admitted | AdmissionRefusal> {
    return this.admitNow(req, limited, from);
  }

  /**
   * {@link admit}, answered at once where the authenticator answers at once (the static
   * tokens): no promise on every request's way in. A promise otherwise.
   */
  admitNow(
    req: IncomingMessage,
    limited = true,
    from: "client" | "replica" = "client",
  ): Admitted | AdmissionRefusal | Promise<Admitted | AdmissionRefusal> {
    const page = from === "replica" ? undefined : this.checkPage(req);
    if (page !== undefined) return page;
    const authenticator: Authenticator = this.#authenticator;
    const statics = authenticator instanceof StaticTokenAuthenticator ? authenticator : undefined;
    const request: AuthRequest = {
      headers: req.headers,
      remoteAddress: req.socket.remoteAddress,
      path: pathOf(req),
      // Node keeps the first of several; a proxy in front may have read another. Counted off
      // the static tokens' fast path (there the first is compared, as before).
      ...(statics === undefined && headerCount(req, "authorization") > 1
        ? { repeatedAuthorization: true }
        : {}),
      ...(statics === undefined ? dpopOf(req, from) : {}),
    };
    if (statics !== undefined) return this.#admitted(request, statics.authenticateNow(request), limited);
    return authenticator.authenticate(request).then((auth) => this.#admitted(request, auth, limited));
  }

  /** The caller the authenticator's answer makes, or why it is refused (credential, rate). */
  #admitted(request: AuthRequest, auth: AuthOutcome, limited: boolean): Admitted | AdmissionRefusal {
    if (!auth.ok)
      return {
        status: auth.status,
        message: auth.message,
        headers: {
          ...auth.headers,
          ...(auth.wwwAuthenticate === undefined ? {} : { "www-authenticate": auth.wwwAuthenticate }),
        },
      };
    const { identity } = auth;
    if (limited) {
      const refused = this.takeRate(identity.key);
      if (refused !== undefined) return refused;
    }
    const profile = identity.profile ?? this.#profile;
    const mode = identity.mode ?? this.#mode;
    const admitted: Admitted = {
      key: identity.key,
      identity,
      // A front bound to no profile serves everything: its callers are operators, as before
      // (a signed-in user only when a rule says so: an identity provider admits many).
      operator: identity.operator || (profile === undefined && identity.via !== "oauth"),
      sseAllowed: true,
      ...(profile === undefined ? {} : { profile }),
      ...(mode === undefined ? {} : { mode }),
      ...(auth.headers === undefined ? {} : { responseHeaders: auth.headers }),
    };
    const authenticator = this.#authenticator;
    if (authenticator.insufficientScope !== undefined && identity.via === "oauth") {
      const challenge = authenticator.insufficientScope.bind(authenticator);
      admitted.challenge = (scope) => challenge(request, scope);
    }
    return admitted;
  }

  /**
   * One admission for a client's MCP request, whatever its entry (`/mcp`, `/sse` and
   * `/messages`, a `/ws` upgrade): a forged replica credential is refused; Host/Origin and the
   * authenticator; and its rate, from the cluster's shared bucket when there is one (the
   * front's own while Redis is away). A request another replica forwarded (`internal`) was
   * counted where it arrived. Answered at once where nothing has to be waited for (a front on
   * its own, static tokens); a promise otherwise.
   */
  admitClient(
    req: IncomingMessage,
  ): ClientAdmission | AdmissionRefusal | Promise<ClientAdmission | AdmissionRefusal> {
    const cluster = this.#cluster;
    if (cluster === undefined) {
      const caller = this.admitNow(req, true, "client");
      if (caller instanceof Promise) return caller.then(asClient);
      return asClient(caller);
    }
    return this.#admitClusterClient(req, cluster);
  }

  async #admitClusterClient(
    req: IncomingMessage,
    cluster: ClusterLink,
  ): Promise<ClientAdmission | AdmissionRefusal> {
    const internal = cluster.fromReplica(req);
    if (internal === "forged")
      return { status: 401, message: "Unauthorized: not a valid replica credential", headers: {} };
    const rateLimit = this.#rateLimit;
    const shared = !internal && rateLimit !== undefined ? cluster.rateLimit : undefined;
    const caller = await this.admit(req, !internal && shared === undefined, internal ? "replica" : "client");
    if ("status" in caller) return caller;
    if (shared !== undefined && rateLimit !== undefined) {
      const pending = shared.take(caller.key, rateLimit.perSecond, rateLimit.burst);
      const decision = pending === undefined ? undefined : await pending;
      const refused =
        decision === undefined
          ? this.takeRate(caller.key)
          : decision.ok
            ? undefined
            : rateRefusal(decision.retryAfterSeconds);
      if (refused !== undefined) return refused;
    }
    return { caller, internal };
  }

  /** Takes one request of `key` from this front's own rate limit, or says why it may not. */
  takeRate(key: string): AdmissionRefusal | undefined {
    const taken = this.#rate?.take(key);
    return taken === undefined || taken.ok ? undefined : rateRefusal(taken.retryAfterSeconds);
  }

  /**
   * Guards /metrics and /readyz: they name every server with its state and errors, so a caller
   * bound to a profile (which must not learn of servers outside it) needs operator rights.
   */
  async admitOperator(req: IncomingMessage, path: string): Promise<AdmissionRefusal | undefined> {
    const caller = await this.admit(req, false);
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
        tokens: this.#authenticator.required ? 1 : 0,
        allowedOrigins: this.#allowedOrigins,
      })
    );
  }
}

/** A client's request let in: its caller, and whether another replica forwarded it. */
export type ClientAdmission = { caller: Admitted; internal: boolean };

function asClient(caller: Admitted | AdmissionRefusal): ClientAdmission | AdmissionRefusal {
  return "status" in caller ? caller : { caller, internal: false };
}

/** How many headers named `name` (in lower case) a request carries: Node keeps only the first. */
function headerCount(req: IncomingMessage, name: string): number {
  const raw = req.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name) count++;
  return count;
}

/**
 * What a DPoP proof is checked against besides the headers: the method, how many `DPoP`
 * headers came (Node keeps the first of several), and whether another replica checked it.
 */
function dpopOf(
  req: IncomingMessage,
  from: "client" | "replica",
): { method: string; dpopHeaders?: number; fromReplica?: true } {
  const method = req.method ?? "GET";
  if (req.headers.dpop === undefined) return { method };
  const count = headerCount(req, "dpop");
  return from === "replica"
    ? { method, dpopHeaders: count, fromReplica: true }
    : { method, dpopHeaders: count };
}

/** The path of a request, without its query. */
function pathOf(req: IncomingMessage): string {
  const url = req.url ?? "/";
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

/** The answer to a caller past its rate limit. */
export function rateRefusal(retryAfterSeconds: number): AdmissionRefusal {
  return {
    status: 429,
    message: `Too Many Requests: retry in ${retryAfterSeconds} s`,
    headers: { "retry-after": String(retryAfterSeconds) },
  };
}
