import { randomBytes } from "node:crypto";
import {
  type AddClientAuthentication,
  auth,
  computeScopeUnion,
  createPrivateKeyJwtAuth,
  DpopSession,
  extractWWWAuthenticateParams,
  type FetchLike,
  isStrictScopeSuperset,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
  withDpopFromProvider,
} from "@modelcontextprotocol/client";
import type { OAuthConfig } from "../config/types.js";
import { McplexError } from "../errors.js";
import { authorizeWithAssertion, isAssertionGrant } from "./authorize-with-assertion.js";
import { createDpopKey, type DpopKeyRecord, openDpopKey } from "./dpop-key.js";

/** What is kept of one server's authorization between runs. */
export interface OAuthRecord {
  client?: StoredOAuthClientInformation;
  tokens?: StoredOAuthTokens;
  /** The DPoP key pair the tokens are bound to (`oauth.dpop`): private, sealed with them. */
  dpop?: DpopKeyRecord;
}

/** Where servers' OAuth records live: the secret store for the CLI, memory by default. */
export interface OAuthStore {
  load(server: string): Promise<OAuthRecord | undefined>;
  save(server: string, record: OAuthRecord): Promise<void>;
  /**
   * Runs `run` while no other holder of the same store authorizes `server` (replicas sharing
   * tokens through Redis): a rotating refresh token is then spent by one of them only. Without
   * it, authorizations are one at a time within this process only.
   */
  exclusive?<T>(server: string, run: () => Promise<T>): Promise<T>;
}

/**
 * Sends the user to `url` to approve access and resolves with the `code` (and `iss`) the
 * authorization server redirected back with. Without one, a server that needs a new
 * authorization fails with a message saying to run `mcplex auth login`.
 */
export type Authorize = (url: URL, server: string) => Promise<{ code: string; iss?: string }>;

/** What the hub's host gives for OAuth: a store, and a way to ask the user. */
export interface OAuthHost {
  store: OAuthStore;
  authorize?: Authorize;
  /**
   * Without `authorize`, the error a server that needs a new grant fails with: a per-user
   * server's says to connect at the gateway's page (`ConnectRequiredError`). Default: run
   * `mcplex auth login`.
   */
  grantRequired?: (server: string) => Error;
}

/** An {@link OAuthStore} in memory: authorizations last as long as the process. */
export function memoryOAuthStore(): OAuthStore {
  const records = new Map<string, OAuthRecord>();
  return {
    load: async (server) => records.get(server),
    save: async (server, record) => {
      records.set(server, record);
    },
  };
}

/**
 * The SDK's `auth()` drives discovery, registration, PKCE, token exchange and refresh;
 * this provider keeps what it produces in an {@link OAuthStore}, and hands the
 * authorization URL to the host's {@link Authorize}.
 */
export class ServerOAuthProvider implements OAuthClientProvider {
  readonly #server: string;
  readonly #config: OAuthConfig;
  readonly #host: OAuthHost;
  #record: Promise<OAuthRecord>;
  #verifier: string | undefined;
  #grant: { code: string; iss?: string } | undefined;
  /** Discovered metadata: kept for this connection only, so connecting writes nothing. */
  #discovery: OAuthDiscoveryState | undefined;
  /** The DPoP key in use and its session (nonces), once loaded or made (`oauth.dpop`). */
  #dpop: Promise<{ session: DpopSession; record: DpopKeyRecord }> | undefined;
  /** Signs a `private_key_jwt` assertion for each token request, when a private key is configured. */
  readonly addClientAuthentication: AddClientAuthentication | undefined;
  /** The client credentials grant's token request; the authorization code grant uses the SDK's. */
  readonly prepareTokenRequest: ((scope?: string) => URLSearchParams) | undefined;

  constructor(server: string, config: OAuthConfig, host: OAuthHost) {
    this.#server = server;
    this.#config = config;
    this.#host = host;
    this.#record = host.store.load(server).then((record) => record ?? {});
    // A store that cannot be read fails the first request that needs it, not the process.
    this.#record.catch(() => {});
    const { clientId, privateKey, signingAlgorithm = "RS256" } = config;
    this.addClientAuthentication =
      privateKey === undefined || clientId === undefined
        ? undefined
        : createPrivateKeyJwtAuth({ issuer: clientId, subject: clientId, privateKey, alg: signingAlgorithm });
    this.prepareTokenRequest =
      config.grant === "client_credentials"
        ? (scope) => new URLSearchParams({ grant_type: "client_credentials", ...(scope ? { scope } : {}) })
        : undefined;
  }

  get redirectUrl(): string | undefined {
    return this.#machine ? undefined : this.#config.redirectUrl;
  }

  /** The server these authorizations are for. */
  get server(): string {
    return this.#server;
  }

  get config(): OAuthConfig {
    return this.#config;
  }

  /** The client credentials and assertion grants: mcplex authenticates as itself and nobody is asked. */
  get #machine(): boolean {
    return this.#config.grant === "client_credentials" || isAssertionGrant(this.#config);
  }

  /**
   * With `oauth.dpop`, the DPoP session whose key signs every proof: the key kept in the
   * server's record (sealed by the store), made and saved there the first time.
   */
  async dpop(): Promise<DpopSession | undefined> {
    if (this.#config.dpop !== true) return undefined;
    if (this.#dpop === undefined) {
      const loading = (async () => {
        const stored = (await this.#record).dpop;
        if (stored !== undefined) {
          return {
            session: await DpopSession.create({ keyPair: await openDpopKey(stored) }),
            record: stored,
          };
        }
        const { keyPair, record } = await createDpopKey();
        await this.#update({ dpop: record });
        return { session: await DpopSession.create({ keyPair }), record };
      })();
      this.#dpop = loading;
      // A failed load is tried again by the next request rather than kept.
      loading.catch(() => {
        if (this.#dpop === loading) this.#dpop = undefined;
      });
    }
    return (await this.#dpop).session;
  }

  get clientMetadataUrl(): string | undefined {
    return this.#config.clientMetadataUrl;
  }

  /** A fresh `state` for each authorization request, which the redirect must bring back. */
  state(): string {
    return randomBytes(16).toString("base64url");
  }

  get clientMetadata(): OAuthClientMetadata {
    const { clientName, clientSecret, privateKey, redirectUrl, scope } = this.#config;
    const method =
      privateKey !== undefined
        ? "private_key_jwt"
        : clientSecret !== undefined
          ? "client_secret_basic"
          : "none";
    return {
      client_name: clientName,
      redirect_uris: this.#machine ? [] : [redirectUrl],
      grant_types: this.#machine ? ["client_credentials"] : ["authorization_code", "refresh_token"],
      response_types: this.#machine ? [] : ["code"],
      token_endpoint_auth_method: method,
      ...(scope === undefined ? {} : { scope }),
    };
  }

  async clientInformation(
    ctx?: OAuthClientInformationContext,
  ): Promise<StoredOAuthClientInformation | undefined> {
    const { clientId, clientSecret } = this.#config;
    if (clientId === undefined) return (await this.#record).client;
    // A configured client belongs to whichever authorization server the server names.
    return {
      client_id: clientId,
      ...(clientSecret === undefined ? {} : { client_secret: clientSecret }),
      ...(ctx === undefined ? {} : { issuer: ctx.issuer }),
    };
  }

  async saveClientInformation(client: StoredOAuthClientInformation): Promise<void> {
    await this.#update({ client });
  }

  async tokens(): Promise<StoredOAuthTokens | undefined> {
    return (await this.#record).tokens;
  }

  async saveTokens(tokens: StoredOAuthTokens): Promise<void> {
    // Saved with the key they are bound to: a key rotated meanwhile by another process does not
    // end up beside tokens it cannot present.
    const dpop = this.#dpop === undefined ? undefined : (await this.#dpop).record;
    await this.#update(dpop === undefined ? { tokens } : { tokens, dpop });
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#discovery;
  }

  saveDiscoveryState(discovery: OAuthDiscoveryState): void {
    this.#discovery = discovery;
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    if (scope === "all" || scope === "verifier") this.#verifier = undefined;
    const drop: Partial<Record<keyof OAuthRecord, undefined>> = {};
    if (scope === "all" || scope === "client") drop.client = undefined;
    if (scope === "all" || scope === "tokens") drop.tokens = undefined;
    if (scope === "all" || scope === "discovery") this.#discovery = undefined;
    if (Object.keys(drop).length > 0) await this.#update(drop);
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    const authorize = this.#host.authorize;
    if (authorize === undefined) {
      const required = this.#host.grantRequired?.(this.#server);
      if (required !== undefined) throw required;
      throw new McplexError(
        "UPSTREAM_UNAUTHORIZED",
        `${this.#server}: the server needs an OAuth authorization`,
        {
          server: this.#server,
          hint: `Run "mcplex auth login ${this.#server}" once; mcplex keeps and refreshes the tokens.`,
        },
      );
    }
    this.#grant = await authorize(url, this.#server);
  }

  /** The code the last {@link redirectToAuthorization} brought back, once. */
  takeGrant(): { code: string; iss?: string } | undefined {
    const grant = this.#grant;
    this.#grant = undefined;
    return grant;
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  /**
   * Authorizes through `run` under the store's lock, unless the stored access token is no
   * longer `refused`: another holder of the store (a replica) authorized meanwhile, and its
   * tokens are used instead.
   */
  async reauthorize(refused: string | undefined, run: () => Promise<void>): Promise<void> {
    const store = this.#host.store;
    if (store.exclusive === undefined) return run();
    return store.exclusive(this.#server, async () => {
      const stored = await store.load(this.#server);
      if (stored?.tokens !== undefined && stored.tokens.access_token !== refused) {
        this.#record = Promise.resolve(stored);
        return;
      }
      await run();
    });
  }

  codeVerifier(): string {
    if (this.#verifier === undefined) throw new Error(`${this.#server}: no PKCE code verifier was saved`);
    return this.#verifier;
  }

  /**
   * Applies `change` to the stored record as it is now, re-read first: another mcplex
   * process (a `serve` refreshing, a `login`) may have saved since this one loaded it.
   */
  async #update(change: Partial<OAuthRecord>): Promise<void> {
    const stored = await this.#host.store.load(this.#server);
    const record = { ...(stored ?? (await this.#record)), ...change };
    for (const key of Object.keys(change) as Array<keyof OAuthRecord>) {
      if (record[key] === undefined) delete record[key];
    }
    this.#record = Promise.resolve(record);
    await this.#host.store.save(this.#server, record);
  }
}

/**
 * A `fetch` for a server's transport that carries the server's access token and, when
 * the server answers 401 (or 403 `insufficient_scope`), authorizes (refresh, or a new
 * grant through the host) and sends the request once more.
 */
export function oauthFetch(
  provider: ServerOAuthProvider,
  serverUrl: URL,
  base: FetchLike = fetch,
): FetchLike {
  let authorizing: Promise<void> | undefined;
  // Innermost, below the Bearer header and the 401 handling: a DPoP-bound token goes out as
  // `DPoP <token>` with a fresh proof, and a resource server's use_dpop_nonce is answered once.
  // Token requests go out on `base`: the SDK signs their proofs itself.
  const resource = provider.config.dpop === true ? withDpopFromProvider(provider)(base) : base;
  return async (input, init) => {
    const send = async () => {
      const headers = new Headers(init?.headers);
      const token = (await provider.tokens())?.access_token;
      if (token !== undefined) headers.set("authorization", `Bearer ${token}`);
      return { response: await resource(input, { ...init, headers }), token };
    };
    const first = await send();
    if (!needsAuthorization(first.response)) return first.response;
    await first.response.body?.cancel().catch(() => {});
    // One authorization at a time: with many calls in flight an expired token is refused
    // many times, and each refusal refreshing on its own would spend the rotating refresh
    // token once and fail the rest. A call refused with a token since replaced just goes again.
    const current = (await provider.tokens())?.access_token;
    if (authorizing === undefined && current === first.token) {
      authorizing = provider
        .reauthorize(first.token, () => authorizeAfter(first.response, provider, serverUrl, base))
        .finally(() => {
          authorizing = undefined;
        });
    }
    await authorizing;
    return (await send()).response;
  };
}

function needsAuthorization(response: Response): boolean {
  if (response.status === 401) return true;
  return response.status === 403 && extractWWWAuthenticateParams(response).error === "insufficient_scope";
}

/** Runs the SDK's flow after a challenge, keeping what was granted on a step-up. */
async function authorizeAfter(
  response: Response,
  provider: ServerOAuthProvider,
  serverUrl: URL,
  fetchFn: FetchLike,
): Promise<void> {
  const { resourceMetadataUrl, scope: challenged } = extractWWWAuthenticateParams(response);
  const held = await provider.tokens();
  // A step-up asks for the union of the granted and the challenged scope; a 401 with a
  // token in hand may mean the server moved to another authorization server, so
  // discovery starts over.
  const scope = response.status === 403 ? computeScopeUnion(held?.scope, challenged) : challenged;
  if (response.status === 401) await provider.invalidateCredentials("discovery");
  await authorizeServer(provider, serverUrl, {
    fetchFn,
    ...(resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl }),
    ...(scope === undefined ? {} : { scope }),
    force: isStrictScopeSuperset(scope, held?.scope),
  });
}

/**
 * Authorizes mcplex with a server: refreshes the tokens when it can, else asks the host
 * for a new grant (`force`: always) and exchanges it. Resolves once tokens are stored.
 */
export async function authorizeServer(
  provider: ServerOAuthProvider,
  serverUrl: URL,
  options: { fetchFn?: FetchLike; resourceMetadataUrl?: URL; scope?: string; force?: boolean } = {},
): Promise<void> {
  const { force = false, ...rest } = options;
  if (isAssertionGrant(provider.config)) return authorizeWithAssertion(provider, serverUrl, rest);
  const first = await auth(provider, { serverUrl, ...rest, forceReauthorization: force });
  if (first === "AUTHORIZED") return;
  const grant = provider.takeGrant();
  if (grant === undefined) throw new Error("the authorization ended without a code");
  const second = await auth(provider, {
    serverUrl,
    ...rest,
    authorizationCode: grant.code,
    ...(grant.iss === undefined ? {} : { iss: grant.iss }),
  });
  if (second !== "AUTHORIZED") throw new Error("the authorization server did not issue tokens for the code");
}

/**
 * Replaces `server`'s DPoP key pair in `store` with a new one, and drops its tokens: they are
 * bound to the old key and no longer usable. The next connection (or `mcplex auth login`)
 * gets tokens bound to the new key. Returns the thumbprints (RFC 7638), old and new.
 */
export async function rotateDpopKey(
  store: OAuthStore,
  server: string,
): Promise<{ previous?: string; thumbprint: string }> {
  const rotate = async () => {
    const record = (await store.load(server)) ?? {};
    const previous = record.dpop === undefined ? undefined : (await openDpopKey(record.dpop)).thumbprint;
    const { keyPair, record: dpop } = await createDpopKey(record.dpop?.alg);
    const { tokens: _bound, ...rest } = record;
    await store.save(server, { ...rest, dpop });
    return { ...(previous === undefined ? {} : { previous }), thumbprint: keyPair.thumbprint };
  };
  return store.exclusive === undefined ? rotate() : store.exclusive(server, rotate);
}
