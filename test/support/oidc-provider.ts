/**
 * A real OAuth 2.1 / OpenID authorization server for the sign-in tests: `oidc-provider` (a
 * certified OpenID provider) on its own `node:http` server on 127.0.0.1, with dynamic client
 * registration (RFC 7591), PKCE S256 (required), resource indicators (RFC 8707) issuing JWT
 * access tokens (RFC 9068) for the resource asked, introspection (RFC 7662, for opaque tokens)
 * and revocation (RFC 7009). Its users, scopes and signing keys are the test's: it can sign in
 * a user through the real authorization-code flow ({@link AuthServer.signIn}), mint tokens the
 * server never issued with the server's own keys ({@link AuthServer.sign}), rotate its keys
 * and stop and start again on the same port, and it counts the JWKS and introspection
 * requests it answered. It also exchanges tokens (RFC 8693) for the clients a test allows
 * ({@link AuthServer.allowExchange}), and logs each exchange.
 *
 * @example
 * const as = await startAuthServer({ users: [{ sub: "alice", email: "a@x", groups: ["eng"] }] });
 * const { accessToken } = await as.signIn({ user: "alice", resource: "http://127.0.0.1:8080/mcp" });
 * // ... a JWT with aud = the resource, iss = as.issuer, sub, email, groups, scope "mcp:tools"
 * await as.close();
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { JSONWebKeySet, JWTPayload } from "jose";
import type { Provider } from "oidc-provider";
import {
  beginCodeFlow,
  type FlowEndpoints,
  type PendingSignIn,
  type RegisteredClient,
  refreshSignIn,
  registerPublicClient,
  type SignInOptions,
  type SignInResult,
} from "./oidc/code-flow.js";
import { isInteractionPath, serveInteraction } from "./oidc/interaction-pages.js";
import { JwtBearerGrant, type JwtBearerPolicy, type JwtBearerRecord } from "./oidc/jwt-bearer-grant.js";
import { MemoryStorage } from "./oidc/memory-adapter.js";
import {
  DEFAULT_USERS,
  providerConfiguration,
  type ResourceSettings,
  ROUTES,
  type TestUser,
} from "./oidc/provider-configuration.js";
import {
  defaultClaims,
  generateSigningKeys,
  type SigningAlg,
  type SigningKey,
  type SignOptions,
  signToken,
} from "./oidc/signing-keys.js";
import {
  type TestClientProviderOptions,
  TestOAuthClientProvider,
} from "./oidc/test-oauth-client-provider.js";
import {
  type ExchangeClient,
  type ExchangePolicy,
  type ExchangeRecord,
  TokenExchangeGrant,
} from "./oidc/token-exchange-grant.js";
import { type ApproveOptions, approveAuthorization, CookieJar } from "./oidc/user-agent.js";

export type {
  PendingSignIn,
  RegisteredClient,
  SignInOptions,
  SignInResult,
} from "./oidc/code-flow.js";
export type { JwtBearerPolicy, JwtBearerRecord } from "./oidc/jwt-bearer-grant.js";
export type { ResourceSettings, TestUser } from "./oidc/provider-configuration.js";
export {
  generateSigningKey,
  type SigningAlg,
  type SigningKey,
  type SignOptions,
} from "./oidc/signing-keys.js";
export {
  connectWithSignIn,
  type TestClientProviderOptions,
  TestOAuthClientProvider,
} from "./oidc/test-oauth-client-provider.js";
export {
  ACCESS_TOKEN_TYPE,
  type ExchangeClient,
  type ExchangePolicy,
  type ExchangeRecord,
  TOKEN_EXCHANGE_GRANT,
} from "./oidc/token-exchange-grant.js";
export {
  type ApproveOptions,
  approveAuthorization,
  CookieJar,
  TEST_REDIRECT_URI,
} from "./oidc/user-agent.js";

/** What {@link startAuthServer} starts. */
export interface AuthServerOptions {
  /** Who can sign in; default alice (`eng`) and bob (`sales`). */
  users?: TestUser[];
  /**
   * Settings of the resources the test knows at start, by resource indicator. A resource not
   * listed is accepted too, with {@link AuthServerOptions.defaultResource} (the mcplex URL
   * usually has a port chosen after the authorization server started); see also
   * {@link AuthServer.setResource}.
   */
  resources?: Record<string, ResourceSettings>;
  /** The settings of resources not listed; default scopes `mcp:tools github:write`, JWT, RS256. */
  defaultResource?: ResourceSettings;
  /** Access token lifetime in seconds; default 3600. */
  accessTokenTtl?: number;
  /** Port on 127.0.0.1; default 0 (any free port, kept across {@link AuthServer.stop}/`start`). */
  port?: number;
  /**
   * Whether the token endpoint takes RFC 8693 token exchange (and the metadata advertises it in
   * `grant_types_supported`). Default true; false for a provider that does not offer it.
   */
  tokenExchange?: boolean;
  /**
   * Whether the token endpoint takes the RFC 7523 JWT-bearer grant for ID-JAGs (this server is
   * then an MCP server's authorization server, see {@link AuthServer.allowJwtBearer}). Default false.
   */
  jwtBearer?: boolean;
}

/** A running test authorization server. */
export interface AuthServer {
  /** `http://127.0.0.1:<port>`, unchanged by key rotation and by stop/start. */
  readonly issuer: string;
  /** The endpoints (as in the server's metadata at `/.well-known/oauth-authorization-server`). */
  readonly endpoints: {
    authorization: string;
    token: string;
    registration: string;
    jwks: string;
    introspection: string;
    revocation: string;
    userinfo: string;
  };
  /** The confidential client a resource server uses at the introspection endpoint. */
  readonly resourceServerClient: { clientId: string; clientSecret: string };
  /** Requests answered at the JWKS endpoint since start (or the last {@link resetCounts}). */
  readonly jwksFetches: number;
  /** Requests answered at the introspection endpoint since start (or the last {@link resetCounts}). */
  readonly introspections: number;
  /** Errors the provider hit while answering (a test may assert there are none). */
  readonly serverErrors: readonly unknown[];
  /** Every key published at the JWKS endpoint (private halves included, for forging). */
  readonly keys: readonly SigningKey[];
  /** The key that signs tokens for `alg` now. */
  signingKey(alg?: SigningAlg): SigningKey;
  /** The public key set, as published at the JWKS endpoint. */
  readonly publicJwks: JSONWebKeySet;
  /** Whether the server is listening. */
  readonly running: boolean;
  /** Sets (or replaces) how tokens for `resource` are made; takes effect at once. */
  setResource(resource: string, settings: ResourceSettings): void;
  /**
   * Registers a confidential client (client_secret_basic) that may exchange users' tokens
   * (RFC 8693) as `policy` allows: for which audiences and scopes, whose tokens, from which
   * audience. Issued tokens are JWTs for the audience, with the user's `sub` and
   * `act: { sub: <client> }`.
   */
  allowExchange(policy: ExchangePolicy, clientId?: string): Promise<ExchangeClient>;
  /** ID-JAGs issued by `issuer` (verified with `jwks()`) are redeemed here (needs `jwtBearer`). */
  trustIdJags(issuer: string, jwks: () => JSONWebKeySet): void;
  /** Registers a confidential client that may redeem ID-JAGs (RFC 7523) under `policy`. */
  allowJwtBearer(policy: JwtBearerPolicy, clientId?: string): Promise<ExchangeClient>;
  /** Workload JWTs (workload identity federation) of `issuer`, verified with `jwks()`, are taken (needs `jwtBearer`). */
  trustWorkloads(issuer: string, jwks: () => JSONWebKeySet): void;
  /** Registers a public client that may present workload JWTs (RFC 7523) under `policy`. */
  allowWorkload(policy: JwtBearerPolicy, clientId?: string): Promise<{ clientId: string }>;
  /** Every JWT-bearer request (ID-JAG or workload JWT) answered since start (or the last {@link resetCounts}). */
  readonly jwtBearerGrants: readonly JwtBearerRecord[];
  /** Replaces an exchanging client's policy; takes effect at its next request. */
  setExchangePolicy(clientId: string, policy: ExchangePolicy): void;
  /** Every token-exchange request answered since start (or the last {@link resetCounts}), refused ones too. */
  readonly exchanges: readonly ExchangeRecord[];
  /** Tokens issued by exchange since start (or the last {@link resetCounts}). */
  readonly exchangesIssued: number;
  /** Resolves once {@link exchanges} holds `count` requests. */
  waitForExchanges(count: number): Promise<void>;
  resetCounts(): void;
  /**
   * New keys (one per algorithm) sign from now on, without changing the issuer or port. The
   * old keys stay published unless `dropOld` (then tokens signed with them no longer verify
   * against a fresh JWKS). Registered clients, sessions and grants survive.
   */
  rotateKeys(options?: { dropOld?: boolean }): Promise<SigningKey[]>;
  /**
   * Signs a JWT with the server's key (or with `options.key`). The claims default to
   * `iss` = the issuer, `iat`/`nbf` = now, `exp` = now + 5 min and a fresh `jti`; the test adds
   * `aud`, `sub`, `scope` (and may override or, with `undefined`, drop any default).
   */
  sign(claims: JWTPayload, options?: SignOptions): Promise<string>;
  /** Registers a public client (RFC 7591, `token_endpoint_auth_method: none`). */
  registerClient(metadata?: Record<string, unknown>): Promise<RegisteredClient>;
  /**
   * The first half of {@link signIn}, for a test that drives the pages itself (in Chromium):
   * the authorization URL (client registered, PKCE S256, `state`, `resource`), and `finish`,
   * which checks the redirect's query and exchanges its code.
   */
  beginSignIn(options: Omit<SignInOptions, "user" | "jar">): Promise<PendingSignIn>;
  /**
   * Signs `user` in through the real flow: dynamic registration (unless `client` is given),
   * an authorization request with PKCE S256 and `resource`, the sign-in and consent pages over
   * HTTP, and the code exchanged at the token endpoint with the verifier and `resource`.
   * A step-up is a new sign-in with more scopes.
   */
  signIn(options: SignInOptions): Promise<SignInResult>;
  /** Spends `signIn`'s refresh token (present when `offline_access` was asked) for a new access token. */
  refresh(previous: SignInResult, options?: { signal?: AbortSignal }): Promise<SignInResult>;
  /** Walks an authorization URL through the sign-in and consent pages (see {@link approveAuthorization}). */
  approve(authorizationUrl: URL | string, options: ApproveOptions): Promise<URLSearchParams>;
  /**
   * The user's browser for mcplex's own OAuth client (the hub's `oauth.authorize`, an
   * `Authorize` of src/upstream/oauth.ts): signs `user` in and resolves with the redirect's
   * `code` and `iss` (rejects on a refusal). One cookie jar per authorizer keeps the session.
   */
  authorizer(
    user: string,
    options?: { decision?: "allow" | "deny" },
  ): (url: URL) => Promise<{ code: string; iss?: string }>;
  /**
   * An SDK `OAuthClientProvider` whose redirect signs `user` in at this server; see
   * {@link TestOAuthClientProvider} for how a `Client` connects with it.
   */
  clientProvider(options: Omit<TestClientProviderOptions, "approve">): TestOAuthClientProvider;
  /** Stops listening and drops open connections; the port is kept for {@link start}. */
  stop(): Promise<void>;
  /** Listens again on the same port, with the same issuer, keys, clients and grants. */
  start(): Promise<void>;
  /** Stops for good (same as {@link stop}; safe to call twice). */
  close(): Promise<void>;
}

/** Starts a test authorization server on 127.0.0.1 (see the module's comment). */
export async function startAuthServer(options: AuthServerOptions = {}): Promise<AuthServer> {
  const ProviderClass = await loadProvider();
  const server = new TestAuthServer(ProviderClass, options, await generateSigningKeys());
  await server.start();
  return server;
}

let providerModule: Promise<typeof Provider> | undefined;

/**
 * Imports `oidc-provider` once. It warns on import when Node is not an LTS it lists (Node 20
 * is not, and mcplex supports it): that one line is held back so that test output stays quiet;
 * any other warning still shows.
 */
function loadProvider(): Promise<typeof Provider> {
  providerModule ??= (async () => {
    const warn = console.warn;
    console.warn = (...args: unknown[]) => {
      if (typeof args[0] === "string" && args[0].includes("oidc-provider WARNING: Unsupported runtime"))
        return;
      warn(...args);
    };
    try {
      return (await import("oidc-provider")).default;
    } finally {
      console.warn = warn;
    }
  })();
  return providerModule;
}

class TestAuthServer implements AuthServer {
  readonly #Provider: typeof Provider;
  readonly #storage = new MemoryStorage();
  readonly #users: Map<string, TestUser>;
  readonly #resources = new Map<string, ResourceSettings>();
  readonly #defaultResource: ResourceSettings;
  readonly #accessTokenTtl: number;
  readonly #errors: unknown[] = [];
  readonly resourceServerClient = {
    clientId: "mcplex-resource-server",
    clientSecret: randomBytes(24).toString("base64url"),
  };
  #keys: SigningKey[];
  #port: number;
  #issuer = "";
  #provider: Provider | undefined;
  #handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  #server: Server | undefined;
  #jwksFetches = 0;
  #introspections = 0;
  readonly #exchange: TokenExchangeGrant;
  readonly #tokenExchange: boolean;
  readonly #jwtBearer: JwtBearerGrant | undefined;

  constructor(ProviderClass: typeof Provider, options: AuthServerOptions, keys: SigningKey[]) {
    this.#Provider = ProviderClass;
    this.#keys = keys;
    this.#port = options.port ?? 0;
    const users = options.users ?? DEFAULT_USERS;
    this.#users = new Map(users.map((user) => [user.sub, user]));
    if (this.#users.size !== users.length) throw new Error("startAuthServer: two users have the same sub");
    for (const [resource, settings] of Object.entries(options.resources ?? {}))
      this.setResource(resource, settings);
    this.#defaultResource = options.defaultResource ?? {};
    this.#accessTokenTtl = options.accessTokenTtl ?? 3600;
    this.#tokenExchange = options.tokenExchange ?? true;
    const state = { issuer: () => this.#issuer, keys: () => this.#keys, storage: this.#storage };
    this.#jwtBearer =
      options.jwtBearer === true
        ? new JwtBearerGrant({ ...state, accessTokenTtl: options.accessTokenTtl ?? 3600 })
        : undefined;
    this.#exchange = new TokenExchangeGrant({
      issuer: () => this.#issuer,
      keys: () => this.#keys,
      users: this.#users,
      storage: this.#storage,
      accessTokenTtl: this.#accessTokenTtl,
    });
  }

  get issuer(): string {
    return this.#issuer;
  }

  get endpoints(): AuthServer["endpoints"] {
    const at = (path: string) => `${this.#issuer}${path}`;
    return {
      authorization: at(ROUTES.authorization),
      token: at(ROUTES.token),
      registration: at(ROUTES.registration),
      jwks: at(ROUTES.jwks),
      introspection: at(ROUTES.introspection),
      revocation: at(ROUTES.revocation),
      userinfo: at(ROUTES.userinfo),
    };
  }

  get jwksFetches(): number {
    return this.#jwksFetches;
  }

  get introspections(): number {
    return this.#introspections;
  }

  get serverErrors(): readonly unknown[] {
    return this.#errors;
  }

  get keys(): readonly SigningKey[] {
    return this.#keys;
  }

  get publicJwks(): JSONWebKeySet {
    return { keys: this.#keys.map((key) => key.publicJwk) };
  }

  get running(): boolean {
    return this.#server?.listening === true;
  }

  signingKey(alg: SigningAlg = "RS256"): SigningKey {
    const key = this.#keys.find((k) => k.alg === alg);
    if (key === undefined) throw new Error(`the auth server has no ${alg} key`);
    return key;
  }

  setResource(resource: string, settings: ResourceSettings): void {
    this.#resources.set(resource, settings);
  }

  allowExchange(policy: ExchangePolicy, clientId?: string): Promise<ExchangeClient> {
    if (!this.#tokenExchange) throw new Error("this auth server was started with tokenExchange: false");
    return this.#exchange.allow(policy, clientId);
  }

  trustIdJags(issuer: string, jwks: () => JSONWebKeySet): void {
    this.#bearerGrant().trust(issuer, jwks);
  }

  allowJwtBearer(policy: JwtBearerPolicy, clientId?: string): Promise<ExchangeClient> {
    return this.#bearerGrant().allow(policy, clientId);
  }

  trustWorkloads(issuer: string, jwks: () => JSONWebKeySet): void {
    this.#bearerGrant().trustWorkloads(issuer, jwks);
  }

  allowWorkload(policy: JwtBearerPolicy, clientId?: string): Promise<{ clientId: string }> {
    return this.#bearerGrant().allowWorkload(policy, clientId);
  }

  get jwtBearerGrants(): readonly JwtBearerRecord[] {
    return this.#jwtBearer?.log ?? [];
  }

  #bearerGrant(): JwtBearerGrant {
    if (this.#jwtBearer === undefined)
      throw new Error("this auth server was started without jwtBearer: true");
    return this.#jwtBearer;
  }

  setExchangePolicy(clientId: string, policy: ExchangePolicy): void {
    this.#exchange.setPolicy(clientId, policy);
  }

  get exchanges(): readonly ExchangeRecord[] {
    return this.#exchange.log;
  }

  get exchangesIssued(): number {
    return this.#exchange.issued;
  }

  waitForExchanges(count: number): Promise<void> {
    return this.#exchange.waitFor(count);
  }

  resetCounts(): void {
    this.#jwksFetches = 0;
    this.#introspections = 0;
    this.#exchange.reset();
    this.#jwtBearer?.reset();
  }

  async rotateKeys(options: { dropOld?: boolean } = {}): Promise<SigningKey[]> {
    const fresh = await generateSigningKeys();
    // oidc-provider signs with the first key of an algorithm and takes its key set only when
    // built: a new Provider on the same server (and storage) is the rotation.
    this.#keys = options.dropOld === true ? fresh : [...fresh, ...this.#keys];
    if (this.#provider !== undefined) this.#build();
    return fresh;
  }

  sign(claims: JWTPayload, options: SignOptions = {}): Promise<string> {
    const current = new Map<SigningAlg, SigningKey>();
    for (const key of this.#keys) if (!current.has(key.alg)) current.set(key.alg, key);
    return signToken({ ...defaultClaims(this.#issuer), ...claims }, options, current, this.#keys);
  }

  registerClient(metadata: Record<string, unknown> = {}): Promise<RegisteredClient> {
    return registerPublicClient(this.#flow(), metadata);
  }

  beginSignIn(options: Omit<SignInOptions, "user" | "jar">): Promise<PendingSignIn> {
    return beginCodeFlow(this.#flow(), options);
  }

  async signIn(options: SignInOptions): Promise<SignInResult> {
    if (!this.#users.has(options.user)) {
      throw new Error(
        `signIn: no user ${options.user}; the server's users are ${[...this.#users.keys()].join(", ")}`,
      );
    }
    const pending = await this.beginSignIn(options);
    const back = await approveAuthorization(pending.url, {
      user: options.user,
      ...(options.jar === undefined ? {} : { jar: options.jar }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    return pending.finish(back);
  }

  refresh(previous: SignInResult, options: { signal?: AbortSignal } = {}): Promise<SignInResult> {
    return refreshSignIn(this.#flow(), previous, options.signal);
  }

  approve(authorizationUrl: URL | string, options: ApproveOptions): Promise<URLSearchParams> {
    return approveAuthorization(authorizationUrl, options);
  }

  authorizer(user: string, options: { decision?: "allow" | "deny" } = {}) {
    const jar = new CookieJar();
    return async (url: URL): Promise<{ code: string; iss?: string }> => {
      const back = await approveAuthorization(url, { user, jar, ...options });
      const code = back.get("code");
      if (code === null)
        throw new Error(`authorization refused: ${back.get("error")}: ${back.get("error_description")}`);
      const iss = back.get("iss");
      return iss === null ? { code } : { code, iss };
    };
  }

  clientProvider(options: Omit<TestClientProviderOptions, "approve">): TestOAuthClientProvider {
    return new TestOAuthClientProvider({
      ...options,
      approve: (url, approveOptions) => this.approve(url, approveOptions),
    });
  }

  async start(): Promise<void> {
    if (this.running) return;
    const server = createServer((req, res) => this.#serve(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once("error", (error: NodeJS.ErrnoException) => {
        // After a stop, the port is the issuer's: taken by another process, it cannot come back.
        const taken = error.code === "EADDRINUSE" && this.#provider !== undefined;
        reject(
          taken
            ? new Error(`the auth server's port ${this.#port} was taken while it was stopped`, {
                cause: error,
              })
            : error,
        );
      });
      server.listen(this.#port, "127.0.0.1", () => {
        server.removeAllListeners("error");
        resolve();
      });
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
    if (this.#provider === undefined) {
      this.#issuer = `http://127.0.0.1:${this.#port}`;
      this.#build();
    }
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    this.#server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  close(): Promise<void> {
    return this.stop();
  }

  #serve(req: IncomingMessage, res: ServerResponse): void {
    const provider = this.#provider;
    const handler = this.#handler;
    if (provider === undefined || handler === undefined) {
      res.writeHead(503).end();
      return;
    }
    const { pathname } = new URL(req.url ?? "/", this.#issuer);
    if (pathname === ROUTES.jwks) this.#jwksFetches++;
    if (pathname === ROUTES.introspection) this.#introspections++;
    if (isInteractionPath(pathname)) {
      serveInteraction(provider, new Set(this.#users.keys()), req, res).catch((error: unknown) => {
        this.#errors.push(error);
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
      return;
    }
    handler(req, res);
  }

  #build(): void {
    const provider = new this.#Provider(
      this.#issuer,
      providerConfiguration({
        users: this.#users,
        keys: this.#keys,
        adapter: this.#storage.adapter,
        resourceServerClient: this.resourceServerClient,
        resource: (indicator) => ({ ...this.#defaultResource, ...this.#resources.get(indicator) }),
        accessTokenTtl: this.#accessTokenTtl,
      }),
    );
    // Koa would print every 5xx; the test reads them from serverErrors instead.
    provider.silent = true;
    provider.on("server_error", (_ctx, error) => this.#errors.push(error));
    if (this.#tokenExchange) this.#exchange.register(provider);
    this.#jwtBearer?.register(provider);
    this.#provider = provider;
    this.#handler = provider.callback();
  }

  #flow(): FlowEndpoints {
    const { authorization, token, registration } = this.endpoints;
    return { issuer: this.#issuer, authorization, token, registration };
  }
}
