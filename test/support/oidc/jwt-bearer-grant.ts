/**
 * The RFC 7523 JWT-bearer grant at the test authorization server, for ID-JAGs (enterprise-managed
 * authorization, SEP-990), as a custom grant of `oidc-provider`: a confidential client
 * (client_secret_basic, registered with {@link JwtBearerGrant.allow}) sends an ID-JAG that a
 * trusted identity provider issued and gets a JWT access token for the ID-JAG's `resource`, with
 * its `sub`. The ID-JAG is checked as an authorization server must: `typ` oauth-id-jag+jwt, the
 * signature against the provider's keys, `iss` a trusted provider, `aud` this server, `exp`,
 * `client_id` the authenticated client, the resource one the client may reach, and its `jti`
 * spent once (unless the policy says `reuse`). Every request is logged.
 *
 * It also takes a workload's own JWT (workload identity federation, SEP-1933) from a public
 * client registered with {@link JwtBearerGrant.allowWorkload}: signed by a trusted workload
 * issuer (a cluster's service-account issuer), `aud` this server, unexpired; the token is for the
 * `resource` asked (one the client may reach), with the workload's `sub`.
 */
import { randomBytes, randomUUID } from "node:crypto";
import {
  createLocalJWKSet,
  decodeProtectedHeader,
  type JSONWebKeySet,
  type JWTPayload,
  jwtVerify,
} from "jose";
import type { Provider } from "oidc-provider";
import type { MemoryStorage } from "./memory-adapter.js";
import { type SigningAlg, type SigningKey, signToken } from "./signing-keys.js";

/** The grant type of RFC 7523. */
export const JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/** What one client may do with the grant. */
export interface JwtBearerPolicy {
  /** The resources (MCP servers' URLs) it may have tokens for, each with the scopes it may ask. */
  resources: Record<string, { scopes?: string[] }>;
  /** Lifetime of issued tokens (seconds). Default the server's access token lifetime. */
  ttlSeconds?: number;
  /** An ID-JAG may be redeemed again (default: once, by its `jti`). */
  reuse?: boolean;
}

/** One redemption, as the server saw it. */
export interface JwtBearerRecord {
  clientId: string;
  sub?: string;
  /** `issued`, or the OAuth error answered. */
  outcome: string;
  /** The ID-JAG's `jti`. */
  jti?: string;
}

/** What the grant reads of the server it runs in. */
export interface JwtBearerServerState {
  issuer: () => string;
  keys: () => readonly SigningKey[];
  storage: MemoryStorage;
  accessTokenTtl: number;
}

interface GrantContext {
  oidc: { client: { clientId: string }; params: Record<string, string | undefined> };
  body: unknown;
}

export class JwtBearerGrant {
  readonly #state: JwtBearerServerState;
  readonly #policies = new Map<string, JwtBearerPolicy>();
  readonly #trusted = new Map<string, () => JSONWebKeySet>();
  readonly #workloadIssuers = new Map<string, () => JSONWebKeySet>();
  readonly #workloads = new Map<string, JwtBearerPolicy>();
  readonly #spent = new Set<string>();
  readonly #log: JwtBearerRecord[] = [];

  constructor(state: JwtBearerServerState) {
    this.#state = state;
  }

  get log(): readonly JwtBearerRecord[] {
    return this.#log;
  }

  reset(): void {
    this.#log.length = 0;
  }

  /** ID-JAGs of `issuer`, verified with the keys `jwks` gives at each request, are taken. */
  trust(issuer: string, jwks: () => JSONWebKeySet): void {
    this.#trusted.set(issuer, jwks);
  }

  /** Workload JWTs of `issuer`, verified with the keys `jwks` gives, are taken. */
  trustWorkloads(issuer: string, jwks: () => JSONWebKeySet): void {
    this.#workloadIssuers.set(issuer, jwks);
  }

  /** Registers a public client (no secret) that may present workload JWTs under `policy`. */
  async allowWorkload(
    policy: JwtBearerPolicy,
    clientId = `workload-${randomUUID()}`,
  ): Promise<{ clientId: string }> {
    await this.#state.storage.adapter("Client").upsert(clientId, {
      client_id: clientId,
      grant_types: [JWT_BEARER_GRANT],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: "none",
    });
    this.#workloads.set(clientId, policy);
    return { clientId };
  }

  /** Registers a confidential client that may redeem ID-JAGs under `policy`. */
  async allow(policy: JwtBearerPolicy, clientId = `redeemer-${randomUUID()}`) {
    const clientSecret = randomBytes(24).toString("base64url");
    await this.#state.storage.adapter("Client").upsert(clientId, {
      client_id: clientId,
      client_secret: clientSecret,
      grant_types: [JWT_BEARER_GRANT],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: "client_secret_basic",
    });
    this.#policies.set(clientId, policy);
    return { clientId, clientSecret };
  }

  register(provider: Provider): void {
    provider.registerGrantType(JWT_BEARER_GRANT, (ctx: GrantContext) => this.#handle(ctx), [
      "assertion",
      "scope",
      "resource",
    ]);
  }

  async #handle(ctx: GrantContext): Promise<void> {
    const record: JwtBearerRecord = { clientId: ctx.oidc.client.clientId, outcome: "issued" };
    try {
      const { clientId } = ctx.oidc.client;
      ctx.body = this.#workloads.has(clientId)
        ? await this.#workload(clientId, ctx.oidc.params, record)
        : await this.#redeem(clientId, ctx.oidc.params, record);
    } catch (error) {
      record.outcome = (error as { error?: string }).error ?? "server_error";
      throw error;
    } finally {
      this.#log.push(record);
    }
  }

  async #redeem(
    clientId: string,
    params: Record<string, string | undefined>,
    record: JwtBearerRecord,
  ): Promise<Record<string, unknown>> {
    const { errors } = await import("oidc-provider");
    const invalid = (description: string) =>
      Object.assign(new errors.CustomOIDCProviderError("invalid_grant", description), {
        error: "invalid_grant",
      });
    const policy = this.#policies.get(clientId);
    if (policy === undefined) throw new errors.UnauthorizedClient("this client may not redeem ID-JAGs");
    const assertion = params.assertion;
    if (assertion === undefined || assertion === "") throw new errors.InvalidRequest("missing assertion");
    let payload: JWTPayload;
    try {
      if (decodeProtectedHeader(assertion).typ !== "oauth-id-jag+jwt")
        throw invalid("the assertion is not an ID-JAG");
      const issuer = (
        JSON.parse(Buffer.from(assertion.split(".")[1] ?? "", "base64url").toString()) as JWTPayload
      ).iss;
      const jwks = issuer === undefined ? undefined : this.#trusted.get(issuer);
      if (jwks === undefined) throw invalid("the ID-JAG's issuer is not trusted here");
      ({ payload } = await jwtVerify(assertion, createLocalJWKSet(jwks()), {
        issuer,
        audience: this.#state.issuer(),
        typ: "oauth-id-jag+jwt",
        algorithms: ["RS256", "ES256"],
      }));
    } catch (error) {
      if ((error as { error?: string }).error !== undefined) throw error;
      throw invalid(`the ID-JAG does not verify: ${(error as Error).message}`);
    }
    record.sub = typeof payload.sub === "string" ? payload.sub : undefined;
    record.jti = payload.jti;
    if (record.sub === undefined) throw invalid("the ID-JAG names no subject");
    if (payload.client_id !== clientId) throw invalid("the ID-JAG was issued to another client");
    const resource = typeof payload.resource === "string" ? payload.resource : undefined;
    const target = resource === undefined ? undefined : policy.resources[resource];
    if (resource === undefined || target === undefined)
      throw new errors.InvalidTarget(`this client may not have tokens for ${resource ?? "(no resource)"}`);
    if (payload.jti === undefined) throw invalid("the ID-JAG has no jti");
    if (policy.reuse !== true) {
      if (this.#spent.has(payload.jti)) throw invalid("the ID-JAG was already redeemed");
      this.#spent.add(payload.jti);
    }
    const asked = (params.scope ?? (typeof payload.scope === "string" ? payload.scope : ""))
      .split(" ")
      .filter((scope) => scope !== "");
    const denied = asked.filter((scope) => !(target.scopes ?? []).includes(scope));
    if (denied.length > 0)
      throw new errors.InvalidScope(`scope ${denied.join(" ")} may not be asked`, denied.join(" "));
    return this.#issue(record.sub, resource, clientId, asked, policy.ttlSeconds);
  }

  /** A workload's own JWT (workload identity federation) for a token of the resource asked. */
  async #workload(
    clientId: string,
    params: Record<string, string | undefined>,
    record: JwtBearerRecord,
  ): Promise<Record<string, unknown>> {
    const { errors } = await import("oidc-provider");
    const invalid = (description: string) => new errors.CustomOIDCProviderError("invalid_grant", description);
    const policy = this.#workloads.get(clientId)!;
    const assertion = params.assertion;
    if (assertion === undefined || assertion === "") throw new errors.InvalidRequest("missing assertion");
    let payload: JWTPayload;
    try {
      const issuer = (
        JSON.parse(Buffer.from(assertion.split(".")[1] ?? "", "base64url").toString()) as JWTPayload
      ).iss;
      const jwks = issuer === undefined ? undefined : this.#workloadIssuers.get(issuer);
      if (jwks === undefined) throw invalid("the workload's issuer is not trusted here");
      const here = this.#state.issuer();
      ({ payload } = await jwtVerify(assertion, createLocalJWKSet(jwks()), {
        issuer,
        audience: [here, `${here}/`],
        algorithms: ["RS256", "ES256"],
      }));
    } catch (error) {
      if ((error as { error?: string }).error !== undefined) throw error;
      throw invalid(`the workload JWT does not verify: ${(error as Error).message}`);
    }
    record.sub = typeof payload.sub === "string" ? payload.sub : undefined;
    record.jti = payload.jti;
    if (record.sub === undefined) throw invalid("the workload JWT names no subject");
    const resource = params.resource;
    const target = resource === undefined ? undefined : policy.resources[resource];
    if (resource === undefined || target === undefined)
      throw new errors.InvalidTarget(`this workload may not have tokens for ${resource ?? "(no resource)"}`);
    const asked = (params.scope ?? "").split(" ").filter((scope) => scope !== "");
    const denied = asked.filter((scope) => !(target.scopes ?? []).includes(scope));
    if (denied.length > 0)
      throw new errors.InvalidScope(`scope ${denied.join(" ")} may not be asked`, denied.join(" "));
    return this.#issue(record.sub, resource, clientId, asked, policy.ttlSeconds);
  }

  /** A JWT access token for `resource`, signed with the server's key. */
  async #issue(
    sub: string,
    resource: string,
    clientId: string,
    scopes: string[],
    ttlSeconds: number | undefined,
  ): Promise<Record<string, unknown>> {
    const ttl = ttlSeconds ?? this.#state.accessTokenTtl;
    const now = Math.floor(Date.now() / 1000);
    const claims: JWTPayload = {
      iss: this.#state.issuer(),
      sub,
      aud: resource,
      client_id: clientId,
      iat: now,
      nbf: now,
      exp: now + ttl,
      jti: randomUUID(),
      ...(scopes.length === 0 ? {} : { scope: scopes.join(" ") }),
    };
    const current = new Map<SigningAlg, SigningKey>();
    for (const key of this.#state.keys()) if (!current.has(key.alg)) current.set(key.alg, key);
    return {
      access_token: await signToken(claims, { alg: "RS256" }, current, this.#state.keys()),
      token_type: "Bearer",
      expires_in: ttl,
      ...(scopes.length === 0 ? {} : { scope: scopes.join(" ") }),
    };
  }
}
