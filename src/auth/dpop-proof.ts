import { createHmac, hash, randomBytes, timingSafeEqual } from "node:crypto";
import { calculateJwkThumbprint, decodeProtectedHeader, errors, importJWK, type JWK, jwtVerify } from "jose";
import { DEFAULT_DPOP_ALGORITHMS } from "../config/read-auth.js";
import type { AuthConfig, DpopConfig } from "../config/types.js";
import { MemoryProofReplays, type ProofReplays } from "./dpop-replay.js";

/** Longest proof looked at: a proof with an RSA-4096 key is under 2 KiB; past this it is refused unread. */
export const MAX_PROOF_LENGTH = 4096;
/** Longest `jti` kept: a random id needs a few dozen characters. */
const MAX_JTI_LENGTH = 256;
/** Members of a JWK that only a private (or symmetric) key has (RFC 7517, 7518 §6). */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];
/** Key types a DPoP proof may carry: asymmetric ones (RFC 9449 §4.2). */
const PUBLIC_KTYS = new Set(["EC", "RSA", "OKP"]);

/** Why a DPoP proof may not pass, with the RFC 9449 §7.1 error code of the challenge. */
export class ProofRefused extends Error {
  override readonly name = "ProofRefused";
  /** `use_dpop_nonce` when the proof lacks the server's current nonce (retry with `DPoP-Nonce`). */
  readonly error: "invalid_dpop_proof" | "use_dpop_nonce";

  constructor(message: string, error: "invalid_dpop_proof" | "use_dpop_nonce" = "invalid_dpop_proof") {
    super(message);
    this.error = error;
  }
}

/** Where DPoP proofs' `jti`s are shared and the key nonces are made with (a cluster's, for every replica). */
export interface DpopSharing {
  /** Default: this process's memory. */
  readonly replays?: ProofReplays;
  /** Default: a random key of this process (nonces then hold on this replica only). */
  readonly nonceKey?: Buffer;
}

/** What `auth.dpop` means when the block is absent: bound tokens accepted with valid proofs, not required. */
const DEFAULTS: DpopConfig = {
  required: false,
  nonce: false,
  algorithms: [...DEFAULT_DPOP_ALGORITHMS],
  window: 300_000,
};

/** The proof checker of an `auth:` block (`auth.dpop`, or its defaults), sharing what `sharing` gives. */
export function dpopProofsFor(config: AuthConfig, sharing: DpopSharing = {}): DpopProofs {
  return new DpopProofs(config.dpop ?? DEFAULTS, {
    replays: sharing.replays ?? new MemoryProofReplays(),
    ...(sharing.nonceKey === undefined ? {} : { nonceKey: sharing.nonceKey }),
    clockTolerance: config.clockTolerance,
  });
}

/** What a proof is checked against: the request it came with and the token it goes with. */
export interface ProofRequest {
  /** The `DPoP` header's value (one header; several are refused before this). */
  readonly proof: string;
  /** The request's method (`htm`). */
  readonly method: string;
  /**
   * The request's URL as the gateway's public resource URL names it (`auth.resource` + path, or
   * the bound origin): what `htu` must equal, query and fragment aside.
   */
  readonly url: string;
  /** The access token presented with it (`ath`). */
  readonly accessToken: string;
  /** The token's `cnf.jkt`: the thumbprint of the key the proof must be signed with. */
  readonly jkt: string;
}

/**
 * Checks DPoP proofs (RFC 9449 §4.3) for the gateway as a resource server, with `jose`: `typ`
 * `dpop+jwt`, an allowed asymmetric `alg`, a public `jwk` header that verifies the signature,
 * `htm` and `htu` of this request, `iat` within `auth.dpop.window` (with the clock tolerance),
 * `ath` the token's hash, the key's RFC 7638 thumbprint the token's `cnf.jkt`, the server's
 * nonce when `auth.dpop.nonce` is on, and a `jti` not seen within the window (claimed last, in
 * {@link ProofReplays}, so that no refused proof takes a place there). Nonces are stateless:
 * an HMAC of a time slot under a key every replica holds, good for the current and last slot.
 */
export class DpopProofs {
  readonly #config: DpopConfig;
  readonly #replays: ProofReplays;
  readonly #nonceKey: Buffer;
  readonly #toleranceMs: number;

  constructor(
    config: DpopConfig,
    options: { replays: ProofReplays; nonceKey?: Buffer; clockTolerance: number },
  ) {
    this.#config = config;
    this.#replays = options.replays;
    this.#nonceKey = options.nonceKey ?? randomBytes(32);
    this.#toleranceMs = options.clockTolerance;
  }

  /** Whether every token must be DPoP-bound (`auth.dpop.required`). */
  get required(): boolean {
    return this.#config.required;
  }

  /** Whether proofs must carry the server's nonce (`auth.dpop.nonce`). */
  get usesNonce(): boolean {
    return this.#config.nonce;
  }

  /** The proof algorithms accepted, for the challenge's `algs` and the resource metadata. */
  get algorithms(): readonly string[] {
    return this.#config.algorithms;
  }

  /**
   * The `DPoP` challenge of a 401 (RFC 9449 §7.1): the resource metadata (RFC 9728), the scopes,
   * the accepted `algs` and the error, if any.
   */
  challenge(metadataUrl: string, scopes: readonly string[], error?: string): string {
    const scope = scopes.length === 0 ? "" : `, scope="${scopes.join(" ")}"`;
    const code = error === undefined ? "" : `, error="${error}"`;
    return `DPoP resource_metadata="${metadataUrl}"${scope}, algs="${this.#config.algorithms.join(" ")}"${code}`;
  }

  /** The nonce to hand out now (`DPoP-Nonce`), when nonces are on. */
  nonce(now = Date.now()): string {
    const slot = Math.floor(now / this.#config.window);
    return `${slot.toString(36)}.${this.#mac(slot)}`;
  }

  /**
   * Checks `request.proof`; resolves when it passes (its `jti` is then spent).
   *
   * @throws ProofRefused saying what is wrong (never the proof, the token or the key).
   */
  async check(request: ProofRequest): Promise<void> {
    const { proof } = request;
    if (proof.length > MAX_PROOF_LENGTH)
      throw new ProofRefused(`the DPoP proof is longer than ${MAX_PROOF_LENGTH} characters`);
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(proof);
    } catch {
      throw new ProofRefused("the DPoP proof is malformed (not a signed JWT)");
    }
    if (proof.split(".").length !== 3)
      throw new ProofRefused("the DPoP proof is malformed (not a signed JWT)");
    if (typeof header.typ !== "string" || header.typ.toLowerCase() !== "dpop+jwt")
      throw new ProofRefused('the DPoP proof\'s typ is not "dpop+jwt"');
    if (typeof header.alg !== "string" || !this.#config.algorithms.includes(header.alg))
      throw new ProofRefused(
        `the DPoP proof's alg is not accepted (accepted: ${this.#config.algorithms.join(", ")})`,
      );
    const jwk = publicJwkOf(header.jwk);
    let key: Awaited<ReturnType<typeof importJWK>>;
    try {
      key = await importJWK(jwk, header.alg);
    } catch {
      throw new ProofRefused("the DPoP proof's jwk is not a key for its alg");
    }
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(proof, key, {
        typ: "dpop+jwt",
        algorithms: [header.alg],
      }));
    } catch (error) {
      if (error instanceof errors.JWSSignatureVerificationFailed)
        throw new ProofRefused("the DPoP proof's signature does not verify with its jwk");
      if (error instanceof errors.JWTClaimValidationFailed)
        throw new ProofRefused(`the DPoP proof's ${error.claim} claim is invalid`);
      throw new ProofRefused("the DPoP proof is malformed");
    }
    this.#checkClaims(payload, request);
    // The key: the token is bound to it, or the proof is someone else's.
    if ((await calculateJwkThumbprint(jwk, "sha256")) !== request.jkt)
      throw new ProofRefused("the DPoP proof's key is not the one the token is bound to (cnf.jkt)");
    if (this.#config.nonce) this.#checkNonce(payload.nonce);
    // Last: only a proof that passed everything else spends its jti.
    const ttl = this.#config.window + 2 * this.#toleranceMs;
    const fresh = await this.#replays.claim(`${request.jkt}:${payload.jti as string}`, ttl);
    if (!fresh) throw new ProofRefused("the DPoP proof was used before (its jti is spent); sign a new one");
  }

  #checkClaims(payload: Record<string, unknown>, request: ProofRequest): void {
    const { jti, htm, htu, iat, ath } = payload;
    if (typeof jti !== "string" || jti.length === 0 || jti.length > MAX_JTI_LENGTH)
      throw new ProofRefused("the DPoP proof has no jti (a unique id of up to 256 characters)");
    if (htm !== request.method)
      throw new ProofRefused(`the DPoP proof's htm is not this request's method (${request.method})`);
    if (typeof htu !== "string" || !sameTarget(htu, request.url))
      throw new ProofRefused(`the DPoP proof's htu is not this request's URL (${request.url})`);
    if (typeof iat !== "number" || !Number.isFinite(iat)) throw new ProofRefused("the DPoP proof has no iat");
    const now = Date.now();
    if (iat * 1000 > now + this.#toleranceMs)
      throw new ProofRefused("the DPoP proof's iat is in the future (check the client's clock)");
    if (iat * 1000 < now - this.#config.window - this.#toleranceMs)
      throw new ProofRefused("the DPoP proof is too old (its iat is past the window); sign a new one");
    if (typeof ath !== "string" || !equalText(ath, hash("sha256", request.accessToken, "base64url")))
      throw new ProofRefused("the DPoP proof's ath is not the hash of the access token sent with it");
  }

  #checkNonce(nonce: unknown): void {
    if (typeof nonce !== "string" || nonce.length > 64)
      throw new ProofRefused(
        "the DPoP proof must carry the nonce of the DPoP-Nonce header",
        "use_dpop_nonce",
      );
    const dot = nonce.indexOf(".");
    const slot = Number.parseInt(nonce.slice(0, dot), 36);
    const current = Math.floor(Date.now() / this.#config.window);
    const valid =
      dot > 0 &&
      nonce.slice(0, dot) === slot.toString(36) &&
      (slot === current || slot === current - 1) &&
      equalText(nonce.slice(dot + 1), this.#mac(slot));
    if (!valid)
      throw new ProofRefused(
        "the DPoP proof's nonce is not a current one; retry with the DPoP-Nonce header's",
        "use_dpop_nonce",
      );
  }

  #mac(slot: number): string {
    return createHmac("sha256", this.#nonceKey).update(`dpop-nonce:${slot}`).digest("base64url").slice(0, 22);
  }
}

/** The proof's `jwk` header, refused unless it is an asymmetric public key. */
function publicJwkOf(value: unknown): JWK {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new ProofRefused("the DPoP proof has no jwk header (the public key that signed it)");
  const jwk = value as Record<string, unknown>;
  if (PRIVATE_MEMBERS.some((member) => member in jwk))
    throw new ProofRefused("the DPoP proof's jwk holds a private or symmetric key; send the public key only");
  if (typeof jwk.kty !== "string" || !PUBLIC_KTYS.has(jwk.kty))
    throw new ProofRefused("the DPoP proof's jwk is not an asymmetric key (EC, RSA or OKP)");
  return jwk as JWK;
}

/**
 * Whether the proof's `htu` names `expected` (RFC 9449 §4.3: query and fragment ignored, the
 * URI compared after syntax- and scheme-based normalization, RFC 3986 §6.2.2-3). A WebSocket
 * client may name its `ws:`/`wss:` URL for the upgrade's `http:`/`https:` one.
 */
export function sameTarget(htu: string, expected: string): boolean {
  if (htu.length > 2048 || !URL.canParse(htu)) return false;
  const given = new URL(htu);
  const want = new URL(expected);
  const scheme = ({ "ws:": "http:", "wss:": "https:" } as Record<string, string>)[given.protocol];
  if (scheme !== undefined) given.protocol = scheme;
  if (given.username !== "" || given.password !== "") return false;
  return given.origin === want.origin && normalPath(given.pathname) === normalPath(want.pathname);
}

/** A path with `/` for empty (RFC 3986 §6.2.3). */
function normalPath(path: string): string {
  return path === "" ? "/" : path;
}

function equalText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
