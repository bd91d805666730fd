import { createHash, timingSafeEqual } from "node:crypto";

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
  if (header === undefined || header.length < 6) return NONE;
  for (let i = 0; i < 6; i++) {
    // ASCII case-insensitive "bearer" without allocating a lowered copy.
    if ((header.charCodeAt(i) | 0x20) !== "bearer".charCodeAt(i)) return NONE;
  }
  let start = 6;
  while (start < header.length && isBlank(header.charCodeAt(start))) start++;
  if (start === 6) {
    return NONE; // "Bearer" alone, or another scheme such as "Bearerx"
  }
  let end = start;
  while (end < header.length && isVisible(header.charCodeAt(end))) end++;
  if (end === start) return malformed("no token after Bearer");
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
