/**
 * RFC 8693 token exchange at the test authorization server, as a custom grant of `oidc-provider`
 * (`registerGrantType`): a confidential client (client_secret_basic, registered with
 * {@link TokenExchangeGrant.allow}) sends a user's access token that this server issued and
 * gets a JWT access token for another audience, with the same `sub` and an `act` claim naming
 * the client (RFC 8693 §4.1). A policy per client says for which audiences (and scopes) it may
 * exchange, whose tokens, and from which audience; anything else is refused with the error the
 * RFC names (`invalid_target`, `invalid_scope`, `access_denied`, `invalid_grant`,
 * `invalid_request`). Every request is logged, so a test can count exchanges (caching,
 * single-flight) and wait for the next one.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { createLocalJWKSet, type JWTPayload, jwtVerify } from "jose";
import type { Provider } from "oidc-provider";
import type { MemoryStorage } from "./memory-adapter.js";
import type { TestUser } from "./provider-configuration.js";
import { type SigningAlg, type SigningKey, signToken } from "./signing-keys.js";

/** The grant type of RFC 8693. */
export const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
/** The token type of an OAuth access token (RFC 8693 §3). */
export const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";
const JWT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt";
/** An identity assertion JWT authorization grant (enterprise-managed authorization, SEP-990). */
export const ID_JAG_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id-jag";

/** What one exchanging client may do. */
export interface ExchangePolicy {
  /**
   * The audiences it may ask tokens for (the `audience` or, without one, the `resource`
   * parameter), each with the scopes it may ask and the issued tokens' lifetime (seconds;
   * default the server's access token lifetime); `omitExpiresIn` leaves `expires_in` out of
   * the answer (RECOMMENDED, not required), so the lifetime is only in the JWT's `exp`.
   */
  audiences: Record<
    string,
    {
      scopes?: string[];
      ttlSeconds?: number;
      omitExpiresIn?: boolean;
      /**
       * The audience is an authorization server that takes ID-JAGs: the client may ask for one
       * (`requested_token_type` id-jag) naming it, for these `resources` (an MCP server's URL).
       * Nothing else is issued for it. `clientId` is the client's id at that authorization
       * server, which the ID-JAG's `client_id` names (default the client's id here).
       */
      idJag?: { resources: string[]; clientId?: string };
    }
  >;
  /** Whose tokens it may exchange (`sub`); default every user of the server. */
  users?: string[];
  /** The audiences a subject token must name (the gateway's resource); default any. */
  subjectAudiences?: string[];
}

/** One exchange request, as the server saw it. */
export interface ExchangeRecord {
  clientId: string;
  /** The subject token's `sub`, once verified. */
  sub?: string;
  audience?: string;
  /** `issued`, or the OAuth error the server answered. */
  outcome: string;
  /** The issued token's `jti`. */
  jti?: string;
  /** `id-jag` when an ID-JAG was asked for (and issued). */
  kind?: "id-jag";
}

/** The client registered for exchanges (its secret goes to mcplex's `credentials.exchange`). */
export interface ExchangeClient {
  clientId: string;
  clientSecret: string;
}

/** What the grant reads of the server it runs in (looked up at each request: keys rotate). */
export interface ExchangeServerState {
  issuer: () => string;
  keys: () => readonly SigningKey[];
  users: ReadonlyMap<string, TestUser>;
  storage: MemoryStorage;
  /** Default lifetime of an issued token (seconds). */
  accessTokenTtl: number;
}

/** The part of oidc-provider's Koa context a grant handler reads and writes. */
interface GrantContext {
  oidc: { client: { clientId: string }; params: Record<string, string | undefined> };
  body: unknown;
}

/** The exchange grant of one test server: its policies, its log, and its handler. */
export class TokenExchangeGrant {
  readonly #state: ExchangeServerState;
  readonly #policies = new Map<string, ExchangePolicy>();
  readonly #log: ExchangeRecord[] = [];
  #waiters: Array<{ count: number; resolve: () => void }> = [];

  constructor(state: ExchangeServerState) {
    this.#state = state;
  }

  /** Every exchange request since start (or the last {@link reset}). */
  get log(): readonly ExchangeRecord[] {
    return this.#log;
  }

  /** Tokens issued since start (or the last {@link reset}). */
  get issued(): number {
    return this.#log.filter((record) => record.outcome === "issued").length;
  }

  reset(): void {
    this.#log.length = 0;
  }

  /** Resolves once the log holds `count` requests. */
  waitFor(count: number): Promise<void> {
    if (this.#log.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }

  /**
   * Registers a confidential client (client_secret_basic) that may use the grant under
   * `policy`; it goes into the provider's storage, as a registration would.
   */
  async allow(policy: ExchangePolicy, clientId = `exchanger-${randomUUID()}`): Promise<ExchangeClient> {
    const clientSecret = randomBytes(24).toString("base64url");
    await this.#state.storage.adapter("Client").upsert(clientId, {
      client_id: clientId,
      client_secret: clientSecret,
      grant_types: [TOKEN_EXCHANGE_GRANT],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: "client_secret_basic",
    });
    this.#policies.set(clientId, policy);
    return { clientId, clientSecret };
  }

  /** Replaces a client's policy; takes effect at its next request. */
  setPolicy(clientId: string, policy: ExchangePolicy): void {
    this.#policies.set(clientId, policy);
  }

  /** Adds the grant to a freshly built provider (a key rotation builds another). */
  register(provider: Provider): void {
    provider.registerGrantType(TOKEN_EXCHANGE_GRANT, (ctx: GrantContext) => this.#handle(provider, ctx), [
      "subject_token",
      "subject_token_type",
      "actor_token",
      "actor_token_type",
      "requested_token_type",
      "audience",
      "resource",
      "scope",
    ]);
  }

  async #handle(provider: Provider, ctx: GrantContext): Promise<void> {
    const record: ExchangeRecord = { clientId: ctx.oidc.client.clientId, outcome: "issued" };
    try {
      ctx.body = await this.#exchange(provider, ctx.oidc.client.clientId, ctx.oidc.params, record);
    } catch (error) {
      record.outcome = (error as { error?: string }).error ?? "server_error";
      throw error;
    } finally {
      this.#log.push(record);
      const ready = this.#waiters.filter((w) => this.#log.length >= w.count);
      this.#waiters = this.#waiters.filter((w) => this.#log.length < w.count);
      for (const waiter of ready) waiter.resolve();
    }
  }

  async #exchange(
    provider: Provider,
    clientId: string,
    params: Record<string, string | undefined>,
    record: ExchangeRecord,
  ): Promise<Record<string, unknown>> {
    const { errors } = await import("oidc-provider");
    const refuse = (error: string, description: string) =>
      new errors.CustomOIDCProviderError(error, description);
    const policy = this.#policies.get(clientId);
    if (policy === undefined) throw new errors.UnauthorizedClient("this client may not exchange tokens");
    const subjectToken = params.subject_token;
    if (subjectToken === undefined || subjectToken === "")
      throw new errors.InvalidRequest("missing required parameter 'subject_token'");
    if (params.subject_token_type !== ACCESS_TOKEN_TYPE && params.subject_token_type !== JWT_TOKEN_TYPE)
      throw new errors.InvalidRequest("subject_token_type must be an access token");
    if (params.actor_token !== undefined)
      throw new errors.InvalidRequest("actor_token is not supported by this server");
    const requested = params.requested_token_type;
    if (requested !== undefined && requested !== ACCESS_TOKEN_TYPE && requested !== ID_JAG_TOKEN_TYPE)
      throw new errors.InvalidRequest("only access tokens and ID-JAGs can be requested");

    const subject = await this.#verifySubject(provider, subjectToken);
    if (subject === undefined)
      throw refuse("invalid_grant", "subject_token is invalid, expired, or not issued by this server");
    record.sub = subject.sub;
    if (
      policy.subjectAudiences !== undefined &&
      !subject.aud.some((a) => policy.subjectAudiences?.includes(a))
    )
      throw refuse(
        "invalid_grant",
        "subject_token was not issued for an audience this client may exchange from",
      );

    const audience = params.audience ?? params.resource;
    if (audience === undefined) throw new errors.InvalidTarget("an audience or resource is required");
    record.audience = audience;
    const target = policy.audiences[audience];
    if (target === undefined)
      throw new errors.InvalidTarget(`this client may not exchange tokens for the audience ${audience}`);
    if (policy.users !== undefined && !policy.users.includes(subject.sub))
      throw new errors.AccessDenied(`tokens of ${subject.sub} may not be exchanged by this client`);
    if (!this.#state.users.has(subject.sub))
      throw new errors.AccessDenied(`no user ${subject.sub} at this server`);

    const asked = (params.scope ?? "").split(" ").filter((scope) => scope !== "");
    const allowed = target.scopes ?? [];
    const denied = asked.filter((scope) => !allowed.includes(scope));
    if (denied.length > 0)
      throw new errors.InvalidScope(
        `scope ${denied.join(" ")} may not be asked for ${audience}`,
        denied.join(" "),
      );

    if ((requested === ID_JAG_TOKEN_TYPE) !== (target.idJag !== undefined))
      throw new errors.InvalidTarget(
        target.idJag === undefined
          ? `${audience} takes no ID-JAGs from this server`
          : `${audience} is an authorization server: only ID-JAGs are issued for it`,
      );
    const ttl = target.ttlSeconds ?? this.#state.accessTokenTtl;
    const now = Math.floor(Date.now() / 1000);
    const jti = randomUUID();
    record.jti = jti;
    if (target.idJag !== undefined) {
      const resource = params.resource;
      if (resource === undefined || !target.idJag.resources.includes(resource))
        throw new errors.InvalidTarget(
          `this client may not have ID-JAGs for the resource ${resource ?? "(none)"}`,
        );
      record.kind = "id-jag";
      const claims: JWTPayload = {
        iss: this.#state.issuer(),
        sub: subject.sub,
        aud: audience,
        resource,
        client_id: target.idJag.clientId ?? clientId,
        iat: now,
        exp: now + ttl,
        jti,
        ...(asked.length === 0 ? {} : { scope: asked.join(" ") }),
      };
      const current = new Map<SigningAlg, SigningKey>();
      for (const key of this.#state.keys()) if (!current.has(key.alg)) current.set(key.alg, key);
      const header = { typ: "oauth-id-jag+jwt" };
      const idJag = await signToken(claims, { alg: "RS256", header }, current, this.#state.keys());
      return {
        access_token: idJag,
        issued_token_type: ID_JAG_TOKEN_TYPE,
        token_type: "N_A",
        ...(target.omitExpiresIn === true ? {} : { expires_in: ttl }),
      };
    }
    const claims: JWTPayload = {
      iss: this.#state.issuer(),
      sub: subject.sub,
      aud: audience,
      client_id: clientId,
      act: { sub: clientId },
      iat: now,
      nbf: now,
      exp: now + ttl,
      jti,
      ...(asked.length === 0 ? {} : { scope: asked.join(" ") }),
    };
    const current = new Map<SigningAlg, SigningKey>();
    for (const key of this.#state.keys()) if (!current.has(key.alg)) current.set(key.alg, key);
    const accessToken = await signToken(claims, { alg: "RS256" }, current, this.#state.keys());
    return {
      access_token: accessToken,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: "Bearer",
      ...(target.omitExpiresIn === true ? {} : { expires_in: ttl }),
      ...(asked.length === 0 ? {} : { scope: asked.join(" ") }),
    };
  }

  /** The subject token's `sub` and `aud` when this server issued it and it is still valid. */
  async #verifySubject(
    provider: Provider,
    token: string,
  ): Promise<{ sub: string; aud: string[] } | undefined> {
    if (token.split(".").length === 3) {
      const jwks = createLocalJWKSet({ keys: this.#state.keys().map((key) => key.publicJwk) });
      try {
        const { payload } = await jwtVerify(token, jwks, {
          issuer: this.#state.issuer(),
          typ: "at+jwt",
          algorithms: ["RS256", "ES256"],
        });
        if (typeof payload.sub !== "string") return undefined;
        const aud = payload.aud === undefined ? [] : [payload.aud].flat();
        return { sub: payload.sub, aud };
      } catch {
        return undefined;
      }
    }
    const stored = await provider.AccessToken.find(token);
    if (stored?.accountId === undefined) return undefined;
    return { sub: stored.accountId, aud: stored.aud === undefined ? [] : [stored.aud].flat() };
  }
}
