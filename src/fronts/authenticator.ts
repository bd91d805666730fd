import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { tokenProblem } from "../config/token-rules.js";
import type { TokenConfig } from "../config/types.js";
import { McplexError } from "../errors.js";
import type { Identity } from "../hub/call-pipeline.js";

export type { Identity };

/** What an {@link Authenticator} is shown of a request: its headers and where it came from. */
export interface AuthRequest {
  readonly headers: IncomingHttpHeaders;
  readonly remoteAddress: string | undefined;
  /** The path asked for, without its query (`/mcp`, `/sse`, `/messages`, `/ws`, `/dashboard/api/...`). */
  readonly path?: string;
  /** Set when the request carries several `Authorization` headers (`headers` holds the first). */
  readonly repeatedAuthorization?: true;
  /** The request's method (`GET` for a WebSocket upgrade): what a DPoP proof's `htm` names. */
  readonly method?: string;
  /** How many `DPoP` headers it carries (RFC 9449 §4.3: exactly one with a DPoP-bound token). */
  readonly dpopHeaders?: number;
  /**
   * Set for a request another replica forwarded, its replica credential verified: its DPoP
   * proof was checked (and its `jti` spent) where it entered the cluster.
   */
  readonly fromReplica?: true;
}

/** A request turned away by an {@link Authenticator}: 401 with a challenge, or 403. */
export interface AuthRefusal {
  readonly status: 401 | 403;
  readonly message: string;
  readonly wwwAuthenticate?: string;
  /** More headers for the answer (`DPoP-Nonce` with a `use_dpop_nonce` challenge). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** The outcome of {@link Authenticator.authenticate}. */
export type AuthOutcome =
  | {
      readonly ok: true;
      readonly identity: Identity;
      /** Headers for the answer to this request (a fresh `DPoP-Nonce`, RFC 9449 §8.2). */
      readonly headers?: Readonly<Record<string, string>>;
    }
  | ({ readonly ok: false } & AuthRefusal);

/**
 * Decides who is calling, once per HTTP request or WebSocket upgrade, for every entry of the
 * HTTP front (`/mcp`, `/sse` and `/messages`, `/ws`, the dashboard and its actions, `/metrics`,
 * `/readyz`). Asynchronous, so an implementation may look keys up (JWKS) or ask an issuer
 * (introspection); it answers a refusal for a bad credential rather than throwing.
 *
 * @example
 * const auth: Authenticator = {
 *   required: true,
 *   async authenticate({ headers }) {
 *     const user = await lookUp(headers.authorization);
 *     return user === undefined
 *       ? { ok: false, status: 401, message: "Unauthorized", wwwAuthenticate: 'Bearer realm="mcplex"' }
 *       : { ok: true, identity: { key: `user:${user.id}`, via: "token", operator: false } };
 *   },
 * };
 */
export interface Authenticator {
  /** Whether callers must present a credential (a non-loopback address needs one). */
  readonly required: boolean;
  authenticate(request: AuthRequest, signal?: AbortSignal): Promise<AuthOutcome>;
  /**
   * The static tokens it accepts, replaceable while serving (a reloaded config's `tokens:`);
   * absent when it takes none.
   */
  readonly statics?: StaticTokenAuthenticator;
  /**
   * A document it publishes at `/.well-known/<name><suffix>` (OAuth protected-resource
   * metadata, RFC 9728: `name` is `oauth-protected-resource`, `suffix` the endpoint's path or
   * ""), or `undefined` for none. Public: served without a credential, to any origin.
   */
  wellKnown?(name: string, suffix: string, request: AuthRequest): Record<string, unknown> | undefined;
  /**
   * Told once the front listens: the origins it is reached at (`http://127.0.0.1:8420`, and
   * `http://localhost:8420` on loopback), for an authenticator whose tokens must name the
   * gateway (their audience) and that has no configured URL of it. Never a request's Host.
   */
  bound?(origins: readonly string[]): void;
  /**
   * The `WWW-Authenticate` value of a 403 for a caller whose token lacks `scope`
   * (space-separated): the challenge a client steps up with.
   */
  insufficientScope?(request: AuthRequest, scope: string): string;
}

/**
 * The static bearer tokens of the config (`tokens:`, `--token`): each bound to a profile, a
 * mode and operator rights; none configured lets everyone in as the operator, keyed by address.
 * The tokens can be replaced while serving (a reloaded config).
 */
export class StaticTokenAuthenticator implements Authenticator {
  #tokens: readonly TokenConfig[];

  /** @throws McplexError naming the entry (never the token) of a token too weak to protect anything. */
  constructor(tokens: readonly TokenConfig[]) {
    checkTokens(tokens, "");
    this.#tokens = tokens;
  }

  get required(): boolean {
    return this.#tokens.length > 0;
  }

  get statics(): StaticTokenAuthenticator {
    return this;
  }

  /** The tokens now in force. */
  get tokens(): readonly TokenConfig[] {
    return this.#tokens;
  }

  /** Replaces the tokens; refused (the old ones stay) when one is weak. */
  setTokens(next: readonly TokenConfig[]): void {
    checkTokens(next, "tokens not changed: ");
    this.#tokens = next;
  }

  async authenticate(request: AuthRequest): Promise<AuthOutcome> {
    return this.authenticateNow(request);
  }

  /** {@link authenticate}, answered at once: static tokens need no look-up. */
  authenticateNow(request: AuthRequest): AuthOutcome {
    const tokens = this.#tokens;
    const auth = authenticate(request.headers.authorization, tokens);
    if (!auth.ok)
      return { ok: false, status: 401, message: auth.message, wwwAuthenticate: auth.wwwAuthenticate };
    if (auth.token === undefined) {
      // Without tokens (loopback only) everyone is the operator, as before tokens existed.
      return {
        ok: true,
        identity: { key: request.remoteAddress ?? "unknown", via: "anonymous", operator: true },
      };
    }
    const entry = tokens[auth.token.index]!;
    const identity: { -readonly [K in keyof Identity]: Identity[K] } = {
      key: auth.token.key,
      via: "token",
      operator: entry.profile === undefined || entry.operator === true,
    };
    if (entry.profile !== undefined) identity.profile = entry.profile;
    if (entry.mode !== undefined) identity.mode = entry.mode;
    return { ok: true, identity };
  }
}

/** Refuses tokens too weak to protect anything, naming the entry (never the token). */
function checkTokens(tokens: readonly TokenConfig[], prefix: string): void {
  tokens.forEach(({ token }, i) => {
    const problem = tokenProblem(token);
    if (problem !== undefined)
      throw new McplexError("INVALID_ARGUMENT", `${prefix}tokens[${i}].token ${problem}`, {
        path: `tokens[${i}].token`,
      });
  });
}

/** The longest delay a timer takes (about 24.8 days); later expiries are checked again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls `expire` when the credential of `identity` stops being valid, for what lives longer
 * than one request (a `/ws` connection, an SSE stream); returns what cancels it. Nothing
 * happens for credentials without an expiry (static tokens).
 */
export function onExpiry(identity: Identity | undefined, expire: () => void): () => void {
  const at = identity?.expiresAt;
  if (at === undefined) return () => {};
  let timer: NodeJS.Timeout;
  const arm = () => {
    const left = at - Date.now();
    timer = setTimeout(left > MAX_TIMER_MS ? arm : expire, Math.max(0, Math.min(left, MAX_TIMER_MS)));
    timer.unref();
  };
  arm();
  return () => clearTimeout(timer);
}

// Bearer authentication of the HTTP front: the header parsed by RFC 6750 in one place, and
// the presented token compared in constant time with every configured one.

/** Which configured token a request presented; `key` (`token#<index>`) is safe to log and to key limits by. */
export type TokenRef = { readonly index: number; readonly key: string };

/** The outcome of {@link authenticate}. */
export type AuthResult =
  | { ok: true; profile?: string; token?: TokenRef }
  | { ok: false; status: 401; wwwAuthenticate: string; message: string };

/** What an `Authorization` header holds: a bearer token, none, or a malformed bearer credential. */
export type BearerHeader =
  | { kind: "token"; token: string }
  | { kind: "none" }
  | { kind: "malformed"; problem: string };

const NONE: BearerHeader = Object.freeze({ kind: "none" });
const isBlank = (c: number) => c === 32 || c === 9; /* SP, HTAB */
const isVisible = (c: number) => c >= 0x21 && c <= 0x7e;

/**
 * Reads `Authorization: Bearer <token>` by RFC 6750 (`"Bearer" 1*SP b64token`), accepting a
 * tab for a space and spaces or tabs after the token (HTTP's optional whitespace), nothing
 * else: the token is one run of visible ASCII. A Unicode blank such as U+00A0 is not
 * whitespace here (Node keeps it in the value; JavaScript's `trim()` would drop it).
 *
 * @example
 * parseBearer("Bearer abc") // { kind: "token", token: "abc" }
 * parseBearer("Bearer \xA0") // { kind: "malformed", ... }
 */
export function parseBearer(header: string | undefined): BearerHeader {
  return parseScheme(header, "bearer", "Bearer");
}

/**
 * Reads `Authorization: DPoP <token>` (RFC 9449 §7.1) as {@link parseBearer} reads Bearer: the
 * scheme case-insensitive, one run of visible ASCII after it.
 *
 * @example
 * parseDpopAuthorization("DPoP abc") // { kind: "token", token: "abc" }
 * parseDpopAuthorization("Bearer abc") // { kind: "none" }
 */
export function parseDpopAuthorization(header: string | undefined): BearerHeader {
  return parseScheme(header, "dpop", "DPoP");
}

/** `<scheme> 1*SP token` with `lower` the scheme in lower case and `name` as it is written. */
function parseScheme(header: string | undefined, lower: string, name: string): BearerHeader {
  const n = lower.length;
  if (header === undefined || header.length < n) return NONE;
  for (let i = 0; i < n; i++) {
    // ASCII case-insensitive scheme without allocating a lowered copy.
    if ((header.charCodeAt(i) | 0x20) !== lower.charCodeAt(i)) return NONE;
  }
  let start = n;
  while (start < header.length && isBlank(header.charCodeAt(start))) start++;
  if (start === n) {
    return NONE; // the scheme alone, or another scheme such as "Bearerx"
  }
  let end = start;
  while (end < header.length && isVisible(header.charCodeAt(end))) end++;
  if (end === start) return malformed(`no token after ${name}`);
  for (let i = end; i < header.length; i++) {
    if (!isBlank(header.charCodeAt(i))) return malformed("the token is followed by something else");
  }
  return { kind: "token", token: header.slice(start, end) };
}

const malformed = (problem: string): BearerHeader => ({ kind: "malformed", problem });

const challenge = (message: string, wwwAuthenticate: string): AuthResult =>
  Object.freeze({ ok: false, status: 401, message, wwwAuthenticate });
const NO_TOKEN = challenge(
  "Unauthorized: send the gateway token as `Authorization: Bearer <token>`",
  'Bearer realm="mcplex"',
);
const BAD_TOKEN = challenge("Unauthorized: invalid token", 'Bearer realm="mcplex", error="invalid_token"');
const MALFORMED = challenge(
  "Unauthorized: malformed Authorization header; send `Authorization: Bearer <token>` (one token of visible ASCII, nothing after it)",
  'Bearer realm="mcplex", error="invalid_token"',
);
const OK: AuthResult = Object.freeze({ ok: true });

const digests = new WeakMap<object, Buffer>();
const refs: TokenRef[] = [];

const sha256 = (text: string): Buffer => createHash("sha256").update(text).digest();

function digestOf(entry: { token: string }): Buffer {
  const digest = digests.get(entry) ?? sha256(entry.token);
  digests.set(entry, digest);
  return digest;
}

/**
 * Checks an `Authorization: Bearer <token>` header ({@link parseBearer}) against the configured
 * tokens; with none configured every request passes, without a profile. SHA-256 digests are
 * compared with `timingSafeEqual` against every token, so neither a token's length nor its
 * position leaks through timing (configured digests are cached per token object).
 *
 * @example
 * const auth = authenticate(req.headers.authorization, config.tokens);
 * if (!auth.ok) res.writeHead(401, { "WWW-Authenticate": auth.wwwAuthenticate }).end(auth.message);
 */
export function authenticate(
  header: string | undefined,
  tokens: ReadonlyArray<{ token: string; profile?: string }>,
): AuthResult {
  if (tokens.length === 0) return OK;
  const bearer = parseBearer(header);
  if (bearer.kind === "none") return NO_TOKEN;
  if (bearer.kind === "malformed") return MALFORMED;
  const given = sha256(bearer.token);
  let match = -1;
  for (let i = 0; i < tokens.length; i++) {
    // No early exit: every token is compared whatever matched before.
    if (timingSafeEqual(given, digestOf(tokens[i]!)) && match < 0) match = i;
  }
  if (match < 0) return BAD_TOKEN;
  const profile = tokens[match]!.profile;
  refs[match] ??= { index: match, key: `token#${match}` };
  const token = refs[match];
  return profile === undefined ? { ok: true, token } : { ok: true, profile, token };
}
