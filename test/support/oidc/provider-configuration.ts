/**
 * How the test authorization server configures `oidc-provider`: its users and their claims,
 * its resources (RFC 8707) and how their access tokens are made, its routes, policies and
 * lifetimes. A `Provider` takes its configuration (and keys) once, when built; the server builds
 * a new one from this at each key rotation.
 */
import type { MemoryStorage } from "./memory-adapter.js";
import type { SigningAlg, SigningKey } from "./signing-keys.js";

/** A user who can sign in; `email`, `groups` and `claims` go into ID and access tokens. */
export interface TestUser {
  sub: string;
  email?: string;
  groups?: string[];
  /** More claims for the access token (top-level in a JWT, in the introspection answer of an opaque one). */
  claims?: Record<string, unknown>;
}

/** How tokens for one resource (an RFC 8707 resource indicator) are made. */
export interface ResourceSettings {
  /** The scopes this resource server knows; an access token carries only those granted of them. */
  scopes?: string[];
  /** `jwt` (RFC 9068, the default) or `opaque` (checked by introspection). */
  format?: "jwt" | "opaque";
  /** The JWT's signing algorithm; default RS256. */
  alg?: SigningAlg;
  /** The token's `aud`; default the resource indicator itself. */
  audience?: string;
  /** Access token lifetime, seconds; default the server's `accessTokenTtl`. */
  ttlSeconds?: number;
}

/** The resource scopes of a resource without settings of its own. */
export const DEFAULT_SCOPES = ["mcp:tools", "github:write"];

/** The users of a server started without any: alice in `eng`, bob in `sales`. */
export const DEFAULT_USERS: TestUser[] = [
  { sub: "alice", email: "alice@example.com", groups: ["eng"] },
  { sub: "bob", email: "bob@example.com", groups: ["sales"] },
];

/** The provider's endpoints, set rather than taken from its defaults so the server can count them. */
export const ROUTES = {
  authorization: "/auth",
  token: "/token",
  registration: "/reg",
  jwks: "/jwks",
  introspection: "/token/introspection",
  revocation: "/token/revocation",
  userinfo: "/me",
};

/** What one `Provider` instance is built from. */
export interface ProviderSettings {
  users: ReadonlyMap<string, TestUser>;
  /** Published, and the first of each algorithm signs. */
  keys: readonly SigningKey[];
  adapter: MemoryStorage["adapter"];
  /** The confidential client allowed to introspect (and revoke) any token. */
  resourceServerClient: { clientId: string; clientSecret: string };
  /** The settings of a resource indicator (looked up at each token, so later changes count). */
  resource: (indicator: string) => ResourceSettings;
  /** Access token lifetime in seconds, where the resource sets none. */
  accessTokenTtl: number;
}

/**
 * `oidc-provider`'s configuration for one `Provider` instance. Every hook the provider would
 * otherwise warn about ("you SHOULD/MUST change it") is given, which also keeps test output quiet.
 */
export function providerConfiguration(settings: ProviderSettings): Record<string, unknown> {
  const { users, resourceServerClient: rs } = settings;
  const claimsOf = (user: TestUser) => ({
    ...user.claims,
    ...(user.email === undefined ? {} : { email: user.email, email_verified: true }),
    ...(user.groups === undefined ? {} : { groups: user.groups }),
  });
  const ttl = settings.accessTokenTtl;
  return {
    adapter: settings.adapter,
    jwks: { keys: settings.keys.map((key) => key.privateJwk) },
    clients: [
      {
        client_id: rs.clientId,
        client_secret: rs.clientSecret,
        redirect_uris: [],
        response_types: [],
        grant_types: [],
      },
    ],
    routes: ROUTES,
    scopes: ["openid", "offline_access", "email", "groups"],
    claims: { openid: ["sub"], email: ["email", "email_verified"], groups: ["groups"] },
    async findAccount(_ctx: unknown, sub: string) {
      const user = users.get(sub);
      if (user === undefined) return undefined;
      return { accountId: sub, claims: async () => ({ sub, ...claimsOf(user) }) };
    },
    async extraTokenClaims(_ctx: unknown, token: { accountId?: string }) {
      const user = token.accountId === undefined ? undefined : users.get(token.accountId);
      if (user === undefined) return undefined;
      const { email_verified: _, ...claims } = claimsOf(user);
      return claims;
    },
    // A registration's `scope` (the SDK sends the resource's scopes) is dropped, as RFC 7591
    // §2 lets a server do: oidc-provider would refuse resource scopes there, and keeping
    // them would bar the client from a later step-up. The validator of a custom property is
    // the documented place to change the metadata (it runs for every registration).
    extraClientMetadata: {
      properties: ["urn:mcplex:test"],
      validator: (_ctx: unknown, _key: string, _value: unknown, metadata: { scope?: string }) => {
        delete metadata.scope;
      },
    },
    interactions: {
      url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}`,
    },
    pkce: { required: () => true },
    clientBasedCORS: () => true,
    renderError: async (ctx: { type: string; body: string }, out: Record<string, string>) => {
      ctx.type = "html";
      ctx.body = `<!doctype html><title>${out.error}</title><h1>${out.error}</h1><p>${out.error_description ?? ""}</p>`;
    },
    ttl: {
      AccessToken: (_ctx: unknown, token: { resourceServer?: { accessTokenTTL?: number } }) =>
        token.resourceServer?.accessTokenTTL ?? ttl,
      AuthorizationCode: 60,
      ClientCredentials: 600,
      DeviceCode: 600,
      BackchannelAuthenticationRequest: 600,
      PreAuthorizedCode: 600,
      IdToken: 3600,
      RefreshToken: 24 * 3600,
      Interaction: 600,
      Session: 24 * 3600,
      Grant: 24 * 3600,
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      introspection: {
        enabled: true,
        allowedPolicy: async (_ctx: unknown, client: { clientId: string }, token: { clientId?: string }) =>
          client.clientId === rs.clientId || client.clientId === token.clientId,
      },
      revocation: {
        enabled: true,
        allowedPolicy: async (_ctx: unknown, client: { clientId: string }, token: { clientId?: string }) =>
          client.clientId === rs.clientId || client.clientId === token.clientId,
      },
      rpInitiatedLogout: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx: unknown, _client: unknown, oneOf?: string[]) => oneOf,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: unknown, indicator: string) => {
          const resource = settings.resource(indicator);
          const format = resource.format ?? "jwt";
          return {
            scope: (resource.scopes ?? DEFAULT_SCOPES).join(" "),
            ...(resource.audience === undefined ? {} : { audience: resource.audience }),
            accessTokenTTL: resource.ttlSeconds ?? ttl,
            accessTokenFormat: format,
            ...(format === "jwt" ? { jwt: { sign: { alg: resource.alg ?? "RS256" } } } : {}),
          };
        },
      },
    },
  };
}
