import type { AuthConfig } from "../config/types.js";
import { McplexError } from "../errors.js";

/** What `GET /dashboard/sign-in` tells the page: where it signs in, with which client and scopes. */
export interface SignInSettings {
  /** The issuer whose authorization server the page sends its user to (one of `auth.issuers`). */
  issuer: string;
  /** The public client registered for the page (`auth.dashboard.clientId`); absent: it registers one. */
  clientId?: string;
  /** The scopes to ask for (`auth.dashboard.scopes`); absent: those the gateway's challenge names. */
  scopes?: string[];
}

/** The endpoints of the authorization server the page's scripts fetch (the rest are navigations). */
const FETCHED = ["token_endpoint", "registration_endpoint"] as const;
/** How long origins learnt from a provider's metadata are kept before they are read again, ms. */
const KEEP_MS = 10 * 60_000;
/** How long the page waits for the provider's metadata before it is served without it, ms. */
const READ_MS = 3_000;
/** How long a provider that did not answer is left alone before it is asked again, ms. */
const RETRY_MS = 30_000;

/**
 * The dashboard's sign-in when the gateway has an `auth:` block: the page signs its user in from
 * the browser, so it needs to know which issuer and client to use ({@link settings}), and its
 * Content-Security-Policy must let its scripts reach that authorization server, which may answer
 * discovery on the issuer's origin and tokens on another ({@link connectSources}).
 */
export class DashboardSignIn {
  readonly #settings: SignInSettings;
  #sources: { at: number; keepMs: number; origins: readonly string[] } | undefined;
  #reading: Promise<readonly string[]> | undefined;

  constructor(auth: AuthConfig) {
    const dashboard = auth.dashboard ?? {};
    const issuer = dashboard.issuer ?? auth.issuers[0]?.issuer;
    if (issuer === undefined)
      throw new McplexError("CONFIG_INVALID", "auth.issuers needs at least one authorization server", {
        path: "auth.issuers",
      });
    this.#settings = {
      issuer,
      ...(dashboard.clientId === undefined ? {} : { clientId: dashboard.clientId }),
      ...(dashboard.scopes === undefined ? {} : { scopes: dashboard.scopes }),
    };
  }

  /** What the page is told at `/dashboard/sign-in` (nothing secret: a public client's id). */
  settings(): SignInSettings {
    return this.#settings;
  }

  /**
   * The origins the page's scripts may fetch besides its own: the issuer's (its metadata) and
   * those of its token and registration endpoints, read from its metadata (RFC 8414 or OpenID
   * discovery) and kept a while. While the provider cannot be reached, the issuer's origin alone
   * (the page then says it cannot reach the provider), within {@link READ_MS}, and the metadata
   * is read again after {@link RETRY_MS}.
   */
  async connectSources(): Promise<readonly string[]> {
    const kept = this.#sources;
    if (kept !== undefined && Date.now() - kept.at < kept.keepMs) return kept.origins;
    this.#reading ??= this.#read(AbortSignal.timeout(READ_MS)).finally(() => {
      this.#reading = undefined;
    });
    return this.#reading;
  }

  async #read(signal: AbortSignal): Promise<readonly string[]> {
    const { issuer } = this.#settings;
    const origins = new Set([new URL(issuer).origin]);
    // Loaded only here: a gateway without sign-in never needs them.
    const [{ metadataUrls }, { fetchJson }] = await Promise.all([
      import("../auth/issuer-metadata.js"),
      import("../auth/fetch-json.js"),
    ]);
    for (const url of metadataUrls(issuer)) {
      let document: Record<string, unknown>;
      if (signal.aborted) break;
      try {
        document = await fetchJson(url, { signal });
      } catch {
        continue;
      }
      if (document.issuer !== issuer) continue;
      for (const key of FETCHED) {
        const endpoint = document[key];
        if (typeof endpoint === "string" && /^https?:\/\//i.test(endpoint) && URL.canParse(endpoint))
          origins.add(new URL(endpoint).origin);
      }
      const found = [...origins];
      this.#sources = { at: Date.now(), keepMs: KEEP_MS, origins: found };
      return found;
    }
    const alone = [...origins];
    this.#sources = { at: Date.now(), keepMs: RETRY_MS, origins: alone };
    return alone;
  }
}
