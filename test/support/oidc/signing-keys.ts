/**
 * The test authorization server's signing keys, made here with `jose` so that a test holds the
 * private halves: it can mint tokens the provider never issued (expired, other audience, a
 * `kid` of another issuer) with the provider's own key, and forge with its public key.
 */
import { randomUUID } from "node:crypto";
import {
  calculateJwkThumbprint,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  type JWK,
  type JWTHeaderParameters,
  type JWTPayload,
  SignJWT,
  UnsecuredJWT,
} from "jose";

/** The asymmetric algorithms the server signs with; each has a key of its own. */
export type SigningAlg = "RS256" | "ES256";

/** The algorithms the server signs with, in the order its key set lists them. */
export const SIGNING_ALGS: readonly SigningAlg[] = ["RS256", "ES256"];

/** One key pair of the authorization server. */
export interface SigningKey {
  /** Its RFC 7638 thumbprint, the `kid` in the JWKS and in token headers. */
  readonly kid: string;
  readonly alg: SigningAlg;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  /** The private JWK (with `kid`, `alg`, `use`), as `oidc-provider`'s `jwks` wants it. */
  readonly privateJwk: JWK;
  /** The public JWK, as the server publishes it at `jwks_uri`. */
  readonly publicJwk: JWK;
  /** The public key as SPKI PEM text: the secret of an HS256-with-the-public-key forgery. */
  readonly publicPem: string;
}

/** Makes a fresh key pair for `alg` (RS256: 2048-bit RSA; ES256: P-256). */
export async function generateSigningKey(alg: SigningAlg): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const marks = { kid, alg, use: "sig" };
  return {
    kid,
    alg,
    privateKey,
    publicKey,
    privateJwk: { ...(await exportJWK(privateKey)), ...marks },
    publicJwk: { ...publicJwk, ...marks },
    publicPem: await exportSPKI(publicKey),
  };
}

/** One new key per algorithm of {@link SIGNING_ALGS}. */
export function generateSigningKeys(): Promise<SigningKey[]> {
  return Promise.all(SIGNING_ALGS.map(generateSigningKey));
}

/** What {@link signToken} signs with; every field has a default taken from the server's keys. */
export interface SignOptions {
  /**
   * The header's algorithm. Default: `key`'s, else RS256. `"none"` makes an unsecured JWT
   * (RFC 7519 §6); `"HS256"` needs a `key` given as bytes (e.g. a public key's PEM text).
   */
  alg?: SigningAlg | "HS256" | "HS384" | "HS512" | "none";
  /**
   * The header's `kid`. Default: the signing key's. A `kid` the server does not publish still
   * signs with the server's current key for `alg` (the "unknown kid" case); `null` leaves the
   * header without one.
   */
  kid?: string | null;
  /** What signs instead of the server's current key: another server's {@link SigningKey}, a key, or secret bytes. */
  key?: SigningKey | CryptoKey | Uint8Array;
  /** More header parameters (`typ` defaults to `at+jwt`, as RFC 9068 access tokens carry). */
  header?: Partial<JWTHeaderParameters>;
}

/**
 * Signs `payload` as a compact JWS. `current` is the server's signing key per algorithm,
 * `known` every key it publishes (a given `kid` picks among them first).
 */
export async function signToken(
  payload: JWTPayload,
  options: SignOptions,
  current: ReadonlyMap<SigningAlg, SigningKey>,
  known: readonly SigningKey[],
): Promise<string> {
  const given = options.key;
  const givenPair = given !== undefined && isSigningKey(given) ? given : undefined;
  const alg = options.alg ?? givenPair?.alg ?? "RS256";
  if (alg === "none") return new UnsecuredJWT(payload).encode();

  let key: CryptoKey | Uint8Array;
  let kid: string | undefined;
  if (givenPair !== undefined) {
    key = givenPair.privateKey;
    kid = givenPair.kid;
  } else if (given !== undefined) {
    key = given as CryptoKey | Uint8Array;
  } else if (alg === "RS256" || alg === "ES256") {
    const byKid = known.find((k) => k.kid === options.kid && k.alg === alg);
    const pair = byKid ?? current.get(alg);
    if (pair === undefined) throw new Error(`the auth server has no ${alg} key to sign with`);
    key = pair.privateKey;
    kid = pair.kid;
  } else {
    throw new Error(`sign: alg ${alg} needs a key (for an HS256 forgery, the public key's bytes)`);
  }
  if (options.kid !== undefined) kid = options.kid ?? undefined;

  const header: JWTHeaderParameters = { typ: "at+jwt", ...options.header, alg };
  if (kid !== undefined) header.kid = kid;
  return new SignJWT(payload).setProtectedHeader(header).sign(key);
}

/** The claims every minted token carries unless the test overrides them. */
export function defaultClaims(issuer: string): JWTPayload {
  const now = Math.floor(Date.now() / 1000);
  return { iss: issuer, iat: now, nbf: now, exp: now + 300, jti: randomUUID() };
}

function isSigningKey(value: unknown): value is SigningKey {
  return typeof value === "object" && value !== null && "privateJwk" in value && "kid" in value;
}
