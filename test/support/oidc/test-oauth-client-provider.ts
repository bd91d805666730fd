/**
 * The SDK's `OAuthClientProvider` (v2, `@modelcontextprotocol/client`; the v1 SDK's interface
 * is a subset) for tests: client information, tokens, PKCE verifier and discovery state in
 * memory, and a redirect that signs a chosen user in at the test authorization server over
 * HTTP instead of opening a browser.
 */
import {
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { type ApproveOptions, CookieJar, TEST_REDIRECT_URI } from "./user-agent.js";

/** How a {@link TestOAuthClientProvider} behaves. */
export interface TestClientProviderOptions {
  /** Who signs in when the SDK redirects. */
  user: string;
  /** Walks an authorization URL through the server's pages (the server's `approve`). */
  approve: (authorizationUrl: URL, options: ApproveOptions) => Promise<URLSearchParams>;
  /** The redirect URI registered and sent; never requested. Default `http://127.0.0.1/oauth/callback`. */
  redirectUrl?: string;
  /** Registration metadata over the defaults (a public native client, code + refresh). */
  clientMetadata?: Partial<OAuthClientMetadata>;
  /** `deny` refuses at the consent page. */
  decision?: "allow" | "deny";
}

/**
 * An in-memory `OAuthClientProvider` whose `redirectToAuthorization` signs
 * {@link TestClientProviderOptions.user} in (keeping the user's session cookies across flows,
 * so a step-up asks consent only) and keeps the redirect's query for `finishAuth`.
 *
 * The SDK's interactive flow: the first `connect` runs discovery (401 → protected-resource
 * metadata → authorization-server metadata), registers, and "redirects", then fails with
 * `UnauthorizedError`; the test hands the redirect's query to `transport.finishAuth`, which
 * exchanges the code, and connects again. {@link connectWithSignIn} does exactly that. A step-up
 * (403 `insufficient_scope`) goes the same way: the call fails with `UnauthorizedError` after
 * the user consented, and succeeds after `finishAuth`. The v1 SDK (`@modelcontextprotocol/sdk`)
 * takes the same object; its `finishAuth` wants the code alone (`takeCallback().get("code")`).
 *
 * @example
 * const auth = as.clientProvider({ user: "alice" });
 * const client = new Client({ name: "t", version: "1" });
 * await connectWithSignIn(client, () => new StreamableHTTPClientTransport(url, { authProvider: auth }), auth);
 * await client.callTool({ name: "echo", arguments: { message: "hi" } });
 */
export class TestOAuthClientProvider implements OAuthClientProvider {
  readonly #options: TestClientProviderOptions;
  readonly #jar = new CookieJar();
  #client: StoredOAuthClientInformation | undefined;
  #tokens: StoredOAuthTokens | undefined;
  #verifier: string | undefined;
  #discovery: OAuthDiscoveryState | undefined;
  #callback: URLSearchParams | undefined;
  /** How many times the SDK sent the user to the authorization server. */
  redirects = 0;

  constructor(options: TestClientProviderOptions) {
    this.#options = options;
  }

  get redirectUrl(): string {
    return this.#options.redirectUrl ?? TEST_REDIRECT_URI;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "mcplex test client (SDK)",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      ...this.#options.clientMetadata,
    };
  }

  /**
   * The query of the last redirect back to the client (`code`, `state`, `iss`, or `error`),
   * for `transport.finishAuth`; taking it clears it.
   */
  takeCallback(): URLSearchParams {
    const callback = this.#callback;
    if (callback === undefined)
      throw new Error("no authorization redirect came back (was redirectToAuthorization called?)");
    this.#callback = undefined;
    return callback;
  }

  /** The access token last saved (what the transport sends as `Bearer`). */
  get accessToken(): string | undefined {
    return this.#tokens?.access_token;
  }

  clientInformation(_ctx?: OAuthClientInformationContext): StoredOAuthClientInformation | undefined {
    return this.#client;
  }

  saveClientInformation(info: StoredOAuthClientInformation): void {
    this.#client = info;
  }

  tokens(_ctx?: OAuthClientInformationContext): StoredOAuthTokens | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: StoredOAuthTokens): void {
    this.#tokens = tokens;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    this.redirects++;
    this.#callback = await this.#options.approve(authorizationUrl, {
      user: this.#options.user,
      jar: this.#jar,
      ...(this.#options.decision === undefined ? {} : { decision: this.#options.decision }),
    });
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.#verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.#verifier === undefined) throw new Error("no PKCE code verifier saved");
    return this.#verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.#discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#discovery;
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    if (scope === "all" || scope === "client") this.#client = undefined;
    if (scope === "all" || scope === "tokens") this.#tokens = undefined;
    if (scope === "all" || scope === "verifier") this.#verifier = undefined;
    if (scope === "all" || scope === "discovery") this.#discovery = undefined;
  }
}

/** What {@link connectWithSignIn} needs of a client and its transport (SDK v2). */
interface Connectable<T> {
  connect(transport: T): Promise<void>;
}
interface FinishesAuth {
  finishAuth(callbackParams: URLSearchParams): Promise<void>;
}

/**
 * Connects `client` through a transport from `makeTransport`, signing in through `provider`
 * when the server asks: on `UnauthorizedError` the redirect's code is exchanged on that
 * transport, and the client connects again on a fresh one. Resolves with the transport in use.
 */
export async function connectWithSignIn<T extends FinishesAuth>(
  client: Connectable<NoInfer<T>>,
  makeTransport: () => T,
  provider: TestOAuthClientProvider,
): Promise<T> {
  const first = makeTransport();
  try {
    await client.connect(first);
    return first;
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    await first.finishAuth(provider.takeCallback());
  }
  const second = makeTransport();
  await client.connect(second);
  return second;
}
