import { createHash } from "node:crypto";
import type { ServerMetadata } from "openid-client";
import type { IdJagCredentialsConfig, ServerConfig, TokenExchangeConfig } from "../config/types.js";
import { AbortedError, McplexError } from "../errors.js";
import type { Bearer } from "../upstream/bearer-fetch.js";
import { type ExchangeAt, exchangeRefused, exchangeUnreachable } from "./exchange-failure.js";
import { discoverExchangeProvider, EXCHANGE_TIMEOUT_MS, requestExchange } from "./exchange-provider.js";
import { IdJagGrants } from "./id-jag-grant.js";
import { lifetimeOf } from "./token-lifetime.js";
import type { UserConnectionPlan, UserCredentialSource, UserRef } from "./user-credentials.js";

/** How long a refusal is remembered, as the introspection cache remembers an inactive token. */
const REFUSAL_TTL_MS = 30_000;
/** A token is exchanged again this long before it expires (at most a quarter of its life). */
const EXPIRY_MARGIN_MS = 30_000;
/** Cached tokens (and refusals) kept at most, over all users and servers. */
const MAX_ENTRIES = 10_000;

/** What a {@link TokenExchangeSource} is made with. */
export interface TokenExchangeOptions {
  /**
   * The issuers of `auth.issuers`: the only providers a user's token is ever sent to. The
   * provider is the user's own issuer, or `credentials.exchange.issuer`, and must be one of these.
   */
  issuers: readonly string[];
  /** How long a refused exchange is remembered (ms). Default 30 s. */
  refusalTtlMs?: number;
  /** The provider's time to answer (ms). Default 10 s. */
  timeoutMs?: number;
  /** Cached tokens kept at most. Default 10,000. */
  maxEntries?: number;
  /** The clock (ms since the epoch); a test moves it to expire tokens. Default `Date.now`. */
  now?: () => number;
}

/** How a server's token is had: `credentials.exchange` or `credentials.idJag`. */
type Grant =
  | { kind: "exchange"; config: TokenExchangeConfig }
  | { kind: "idJag"; config: IdJagCredentialsConfig; url: string };

/** One exchange, as asked: who, where, for what. */
interface ExchangeRequest {
  server: string;
  /** The identity provider the user's token goes to. */
  issuer: string;
  grant: Grant;
  /** The cache key: the user's key and everything the exchanged token depends on (no secret). */
  key: string;
}

interface CachedToken {
  token: string;
  /** When to exchange again (ms): the token's expiry less a margin. */
  renewAt: number;
}

interface Refusal {
  error: McplexError;
  until: number;
}

/**
 * Tokens for servers of `credentials: { exchange }`: the signed-in user's own access token
 * exchanged (RFC 8693, with `openid-client`) at the identity provider for a token of the
 * server's audience, with its scopes. Never anyone else's token, never the shared config
 * credential, never the caller's own token as it is: when the exchange fails, the call fails.
 * Servers of `credentials: { idJag }` get theirs the same way through an ID-JAG
 * ({@link IdJagGrants}): the same caching, single flight and refusals.
 *
 * - The provider is discovered once per issuer (OpenID discovery, then RFC 8414).
 * - Tokens are cached per (user, provider, client, audience, resource, scopes) until shortly
 *   before they expire; concurrent asks of one user share one exchange (single-flight).
 * - A refusal is remembered for 30 s per (user, request, subject token), so a refused user
 *   does not hammer the provider; a user who signs in again (a new token) may try at once.
 *
 * @example
 * const source = new TokenExchangeSource({ issuers: config.auth.issuers.map((i) => i.issuer) });
 * const { bearer } = await source.plan(user, server); // throws TOKEN_EXCHANGE_FAILED when refused
 * const transport = new StreamableHTTPClientTransport(url, { fetch: bearerFetch(bearer) });
 */
export class TokenExchangeSource implements UserCredentialSource {
  readonly #issuers: ReadonlySet<string>;
  readonly #refusalTtl: number;
  readonly #timeout: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #tokens = new Map<string, CachedToken>();
  readonly #inflight = new Map<string, Promise<string>>();
  readonly #refusals = new Map<string, Refusal>();
  readonly #metadata = new Map<string, Promise<ServerMetadata>>();
  readonly #idJag: IdJagGrants;

  constructor(options: TokenExchangeOptions) {
    this.#issuers = new Set(options.issuers);
    this.#refusalTtl = options.refusalTtlMs ?? REFUSAL_TTL_MS;
    this.#timeout = options.timeoutMs ?? EXCHANGE_TIMEOUT_MS;
    this.#maxEntries = options.maxEntries ?? MAX_ENTRIES;
    this.#now = options.now ?? Date.now;
    this.#idJag = new IdJagGrants({ timeoutMs: this.#timeout, now: this.#now, maxEntries: this.#maxEntries });
  }

  /**
   * The plan of an exchange server: a `bearer` that gives the user's exchanged token. The first
   * token is exchanged here, so a refusal fails the plan before any connection is tried.
   *
   * @throws McplexError `TOKEN_EXCHANGE_FAILED` naming the server and the provider's answer.
   */
  async plan(user: UserRef, server: ServerConfig, signal?: AbortSignal): Promise<UserConnectionPlan> {
    await this.token(user, server, signal);
    const bearer: Bearer = Object.assign((s?: AbortSignal) => this.token(user, server, s), {
      invalidate: (token: string) => this.invalidate(user, server, token),
    });
    return { bearer };
  }

  /**
   * The user's token for `server`: from the cache, or exchanged now (one exchange for all who
   * ask at once). `signal` ends this caller's wait, not an exchange others wait for too.
   */
  async token(user: UserRef, server: ServerConfig, signal?: AbortSignal): Promise<string> {
    const request = this.#request(user, server);
    if (signal?.aborted === true) throw cancelled(request.server);
    const now = this.#now();
    const cached = this.#tokens.get(request.key);
    if (cached !== undefined && cached.renewAt > now) return cached.token;
    const subject = subjectTokenOf(user, request.server);
    const refusalKey = `${request.key}\n${digest(subject)}`;
    const refusal = this.#refusals.get(refusalKey);
    if (refusal !== undefined) {
      if (refusal.until > now) throw refusal.error;
      this.#refusals.delete(refusalKey);
    }
    let flight = this.#inflight.get(request.key);
    if (flight === undefined) {
      flight = this.#exchange(request, subject, refusalKey).finally(() => {
        this.#inflight.delete(request.key);
      });
      this.#inflight.set(request.key, flight);
    }
    return waitFor(flight, signal, request.server);
  }

  /** Drops the cached token of (user, server) if it is still `token` (the server refused it). */
  invalidate(user: UserRef, server: ServerConfig, token: string): void {
    const key = this.#request(user, server).key;
    if (this.#tokens.get(key)?.token === token) this.#tokens.delete(key);
  }

  /**
   * Drops what is cached for a user (by {@link UserRef.key}), for every server or for `server`
   * alone: signed out, or revoked by an operator. Their next call exchanges anew.
   */
  forget(userKey: string, server?: ServerConfig): void {
    const prefix = `${JSON.stringify(userKey)}\n`;
    const only = server === undefined ? undefined : `\n${targetOf(grantOf(server))}`;
    this.#idJag.forget(prefix, only);
    for (const map of [this.#tokens, this.#refusals]) {
      for (const key of map.keys()) {
        if (!key.startsWith(prefix)) continue;
        // A refusal's key ends in the subject token's digest: its request is the line before.
        const request = map === this.#refusals ? key.slice(0, key.lastIndexOf("\n")) : key;
        if (only === undefined || request.endsWith(only)) map.delete(key);
      }
    }
  }

  #request(user: UserRef, server: ServerConfig): ExchangeRequest {
    const grant = grantOf(server);
    const issuer = grant.config.issuer ?? user.issuer;
    const at = grant.kind === "exchange" ? "credentials.exchange" : "credentials.idJag";
    if (issuer === undefined) {
      throw new McplexError(
        "TOKEN_EXCHANGE_FAILED",
        `${server.name}: your sign-in names no identity provider to exchange your token at`,
        {
          server: server.name,
          hint: `Set ${at}.issuer of ${server.name} to one of auth.issuers.`,
        },
      );
    }
    if (!this.#issuers.has(issuer)) {
      throw new McplexError(
        "TOKEN_EXCHANGE_FAILED",
        `${server.name}: the identity provider ${issuer} is not one of auth.issuers, and users' tokens are sent to none other`,
        {
          server: server.name,
          hint: `Add ${issuer} to auth.issuers, or set ${at}.issuer of ${server.name} to one of them.`,
        },
      );
    }
    const key = [JSON.stringify(user.key), JSON.stringify(issuer), targetOf(grant)].join("\n");
    return { server: server.name, issuer, grant, key };
  }

  async #exchange(request: ExchangeRequest, subject: string, refusalKey: string): Promise<string> {
    const started = this.#now();
    const answer = await this.#grant(request, subject);
    if (answer.kind === "refused") {
      const failure = answer.failure;
      this.#remember(this.#refusals, refusalKey, { error: failure, until: this.#now() + this.#refusalTtl });
      throw failure;
    }
    const lifetime = lifetimeOf(answer.expiresIn, answer.token, this.#now());
    const margin = Math.min(EXPIRY_MARGIN_MS, lifetime / 4);
    this.#remember(this.#tokens, request.key, { token: answer.token, renewAt: started + lifetime - margin });
    return answer.token;
  }

  /** One token from the provider (and, for an ID-JAG, the server's authorization server), or a refusal. */
  async #grant(
    request: ExchangeRequest,
    subject: string,
  ): Promise<
    { kind: "issued"; token: string; expiresIn?: number } | { kind: "refused"; failure: McplexError }
  > {
    const { grant } = request;
    if (grant.kind === "idJag") {
      let idp: ServerMetadata;
      try {
        idp = await this.#discover(request);
      } catch (error) {
        throw exchangeUnreachable(request, error);
      }
      const { config, url } = grant;
      return this.#idJag.token({ ...request, config, url, idp, subject });
    }
    const at: ExchangeAt = { server: request.server, issuer: request.issuer, config: grant.config };
    let answer: Awaited<ReturnType<typeof requestExchange>>;
    try {
      answer = await requestExchange(await this.#discover(request), grant.config, subject, this.#timeout);
    } catch (error) {
      throw exchangeUnreachable(at, error);
    }
    if (answer.kind === "refused") return { kind: "refused", failure: exchangeRefused(at, answer, subject) };
    return answer;
  }

  /** The issuer's metadata, discovered once (a failed discovery is tried again next time). */
  #discover(request: ExchangeRequest): Promise<ServerMetadata> {
    let metadata = this.#metadata.get(request.issuer);
    if (metadata === undefined) {
      metadata = discoverExchangeProvider(request.issuer, this.#timeout);
      metadata.catch(() => this.#metadata.delete(request.issuer));
      this.#metadata.set(request.issuer, metadata);
    }
    return metadata;
  }

  /** Stores `value`, keeping the map within its bound: expired entries go first, then the oldest. */
  #remember<T extends { renewAt: number } | { until: number }>(
    map: Map<string, T>,
    key: string,
    value: T,
  ): void {
    map.delete(key);
    if (map.size >= this.#maxEntries) {
      const now = this.#now();
      for (const [k, v] of map) if (("renewAt" in v ? v.renewAt : v.until) <= now) map.delete(k);
      for (const k of map.keys()) {
        if (map.size < this.#maxEntries) break;
        map.delete(k);
      }
    }
    map.set(key, value);
  }
}

/** A server's `credentials.exchange` or `credentials.idJag`, or an error saying it has neither. */
function grantOf(server: ServerConfig): Grant {
  const credentials = server.credentials;
  if (typeof credentials === "object" && credentials !== null) {
    if ("exchange" in credentials) return { kind: "exchange", config: credentials.exchange };
    if ("idJag" in credentials && "url" in server)
      return { kind: "idJag", config: credentials.idJag, url: server.url };
  }
  throw new McplexError(
    "TOKEN_EXCHANGE_FAILED",
    `${server.name}: is not configured for token exchange (credentials: { exchange: ... } or { idJag: ... })`,
    { server: server.name },
  );
}

/** What an exchanged token depends on besides the user and the provider (no secret). */
function targetOf(grant: Grant): string {
  const { config } = grant;
  const scopes = [...(config.scopes ?? [])].sort();
  if (grant.kind === "exchange")
    return JSON.stringify([config.clientId, grant.config.audience, grant.config.resource ?? null, scopes]);
  const { serverClientId, subjectTokenType = "access_token" } = grant.config;
  return JSON.stringify(["id-jag", config.clientId, serverClientId, grant.url, subjectTokenType, scopes]);
}

/** The user's own access token, which only an exchange ever reads. */
function subjectTokenOf(user: UserRef, server: string): string {
  const token = user.subjectToken?.();
  if (token === undefined || token === "") {
    throw new McplexError(
      "TOKEN_EXCHANGE_FAILED",
      `${server}: this server is called with your own token exchanged at your identity provider, and your sign-in carries no token to exchange`,
      {
        server,
        hint: "Connect to the gateway with a signed-in OAuth access token (see the README's Sign-in).",
      },
    );
  }
  return token;
}

/** A short digest of the subject token: tells a new sign-in from the refused one, keeps no token. */
function digest(token: string): string {
  return createHash("sha256").update(token).digest("base64url").slice(0, 22);
}

function cancelled(server: string): AbortedError {
  return new AbortedError(`${server}: the call was cancelled while its token was exchanged`, { server });
}

/** Waits for a shared exchange, giving up (alone) when this caller's signal aborts. */
function waitFor(flight: Promise<string>, signal: AbortSignal | undefined, server: string): Promise<string> {
  if (signal === undefined) return flight;
  return new Promise((resolve, reject) => {
    const abort = () => reject(cancelled(server));
    signal.addEventListener("abort", abort, { once: true });
    flight.then(
      (token) => {
        signal.removeEventListener("abort", abort);
        resolve(token);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}
