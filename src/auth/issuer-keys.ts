import { createLocalJWKSet, type FlattenedJWSInput, type JWSHeaderParameters, type LocalJWKSet } from "jose";
import { fetchJson, ProviderUnreachable } from "./fetch-json.js";

/** Keys older than this are fetched again in the background on their next use. */
const REFRESH_AFTER_MS = 10 * 60_000;

/** A token whose key is not among the issuer's known keys, and may not be fetched again yet. */
export class KeyNotFound extends Error {
  override readonly name = "KeyNotFound";

  constructor(
    message: string,
    /** Whether the keys could not be fetched at all (the provider is away), rather than lacking this one. */
    readonly unavailable: boolean,
  ) {
    super(message);
  }
}

/**
 * One issuer's signing keys (its JWKS), fetched when the first token needs them and kept.
 *
 * Our own rather than jose's `createRemoteJWKSet`, which fails known keys once its cache is
 * older than its max age and the provider does not answer. Here:
 * - a token signed with a known key verifies whether or not the provider answers;
 * - an unknown `kid` fetches the set again, at most once per `cooldownMs` however many such
 *   tokens arrive (one fetch in flight, shared); within the cooldown it fails closed;
 * - a set older than ten minutes is fetched again in the background, so a key the provider
 *   withdrew stops verifying; a failed fetch keeps the keys known before.
 */
export class IssuerKeys {
  readonly #jwksUri: () => Promise<string>;
  readonly #cooldownMs: number;
  readonly #onFetchFailed: (reason: string) => void;
  #keys: LocalJWKSet | undefined;
  #kids = new Set<string>();
  #fetchedAt = Number.NEGATIVE_INFINITY;
  #triedAt = Number.NEGATIVE_INFINITY;
  #pending: Promise<void> | undefined;
  /** How many times the key set was fetched (tried), for tests and metrics. */
  fetches = 0;

  constructor(options: {
    /** Where the keys are: configured, or read from the issuer's metadata (itself fetched lazily). */
    jwksUri: () => Promise<string>;
    cooldownMs: number;
    /** Told when a fetch fails, with why (for a log line). */
    onFetchFailed: (reason: string) => void;
  }) {
    this.#jwksUri = options.jwksUri;
    this.#cooldownMs = options.cooldownMs;
    this.#onFetchFailed = options.onFetchFailed;
  }

  /**
   * The key that verifies a token with this header: jose calls it from `jwtVerify`.
   *
   * @throws KeyNotFound when no known key matches and the set may not be fetched again yet.
   */
  readonly resolve = async (header: JWSHeaderParameters, token: FlattenedJWSInput) => {
    const now = Date.now();
    const known = this.#keys !== undefined && (header.kid === undefined || this.#kids.has(header.kid));
    if (!known) await this.#refresh(now);
    else if (now - this.#fetchedAt > REFRESH_AFTER_MS) void this.#refresh(now);
    const keys = this.#keys;
    if (keys === undefined)
      throw new KeyNotFound("the issuer's signing keys could not be fetched; try again later", true);
    if (header.kid !== undefined && !this.#kids.has(header.kid))
      throw new KeyNotFound("the token is signed with a key the issuer does not publish", false);
    return keys(header, token);
  };

  /** Fetches the set unless a fetch was tried within the cooldown; one at a time. */
  #refresh(now: number): Promise<void> {
    if (this.#pending !== undefined) return this.#pending;
    if (now - this.#triedAt < this.#cooldownMs) return Promise.resolve();
    this.#triedAt = now;
    this.fetches++;
    this.#pending = this.#fetch().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #fetch(): Promise<void> {
    try {
      const url = await this.#jwksUri();
      const document = await fetchJson(url);
      if (!Array.isArray(document.keys))
        throw new ProviderUnreachable(`${url}: not a JSON Web Key Set (no "keys" list)`);
      // Keys for encryption, or of no kind jose can verify with, are left out, not fatal.
      const keys = (document.keys as unknown[]).filter(
        (key): key is { kid?: unknown; use?: unknown; kty?: unknown } =>
          typeof key === "object" && key !== null && (key as { use?: unknown }).use !== "enc",
      );
      this.#keys = createLocalJWKSet({ keys } as Parameters<typeof createLocalJWKSet>[0]);
      this.#kids = new Set(keys.flatMap((key) => (typeof key.kid === "string" ? [key.kid] : [])));
      this.#fetchedAt = Date.now();
    } catch (error) {
      this.#onFetchFailed((error as Error).message);
    }
  }
}
