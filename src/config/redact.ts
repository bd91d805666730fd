import { encodedForms } from "./secret-encodings.js";

/** What a redacted secret is replaced with. */
export const REDACTED = "***";

/** How deep a cause chain or a JSON value is redacted; deeper parts are replaced whole. */
export const MAX_REDACT_DEPTH = 32;

/**
 * Below this length a secret is only replaced where it stands as a whole token, so that a
 * three-character secret does not turn every "abc" inside longer words into `***`.
 */
const SUBSTRING_MIN_LENGTH = 4;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Replaces every occurrence of every secret in `text` with `***`.
 *
 * Secrets of 4 characters or more are replaced wherever they occur, longest first (so a
 * whole `Bearer abc...` goes before its token part), and so are their common encodings
 * (JSON-escaped, percent-encoded, base64 and base64url; see {@link encodedForms}). Shorter ones are replaced only as whole
 * tokens (not inside a longer run of letters/digits), which keeps ordinary text readable
 * while a short secret printed on its own (`KEY=abc`) is still hidden. Empty strings are
 * ignored. To redact many texts with the same secrets, make one {@link redactor}.
 *
 * @example
 * redact("auth failed for ghp_123456", config.secrets) // "auth failed for ***"
 */
export function redact(text: string, secrets: readonly string[]): string {
  if (secrets.length === 0 || text === "") return text;
  return redactor(secrets)(text);
}

/**
 * {@link redact} with the secrets prepared once (encoded forms computed, sorted, short ones
 * compiled to patterns), for a hot path such as naming every call a gateway forwards.
 */
export function redactor(secrets: readonly string[]): (text: string) => string {
  const unique = [...new Set(secrets)].filter((s) => s !== "");
  // Short secrets get no encoded forms: their base64 is a few letters found in any long text.
  const encoded = unique.filter((s) => s.length >= SUBSTRING_MIN_LENGTH).flatMap(encodedForms);
  const all = [...new Set([...unique, ...encoded])].sort((a, b) => b.length - a.length);
  const long = all.filter((secret) => secret.length >= SUBSTRING_MIN_LENGTH);
  // One pass for all long forms, longest first among those that start at the same place:
  // replacing them one by one copied the whole text once per form found, which made a large
  // error with many secrets slow (12 s instead of under 1 s for 14 MiB and 200 secrets).
  const anyLong = long.length === 0 ? undefined : new RegExp(long.map(escapeRegExp).join("|"), "g");
  const short = all
    .filter((secret) => secret.length < SUBSTRING_MIN_LENGTH)
    .map((secret) => new RegExp(`(?<![A-Za-z0-9])${escapeRegExp(secret)}(?![A-Za-z0-9])`, "g"));
  if (anyLong === undefined && short.length === 0) return (text) => text;
  return (text) => {
    let out = anyLong === undefined ? text : text.replace(anyLong, REDACTED);
    for (const pattern of short) out = out.replace(pattern, REDACTED);
    return out;
  };
}

/** Secrets that can grow (a reloaded config brings more), redacted by a prepared {@link redactor}. */
export class SecretSet {
  #secrets: readonly string[];
  #redact: (text: string) => string;

  constructor(secrets: readonly string[]) {
    this.#secrets = secrets;
    this.#redact = redactor(secrets);
  }

  /** `text` with every secret held replaced by `***`. */
  redact(text: string): string {
    return this.#redact(text);
  }

  /** The secrets held; a new array each time {@link add} adds one (so a cache can compare it). */
  get secrets(): readonly string[] {
    return this.#secrets;
  }

  /** Adds secrets; those held already stay. */
  add(secrets: readonly string[]): void {
    const fresh = secrets.filter((secret) => !this.#secrets.includes(secret));
    if (fresh.length === 0) return;
    this.#secrets = [...this.#secrets, ...fresh];
    this.#redact = redactor(this.#secrets);
  }
}

/** Env keys, header names and query parameters whose values are treated as credentials. */
const SECRET_NAME = /token|secret|key|password|passwd|pwd|auth|credential|cookie/i;

/** Whether a value stored under this env key / header / query parameter is a credential. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/**
 * Values under secret-looking names that are plainly not credentials (`MAX_TOKENS: 4096`,
 * `USE_AUTH: true`). Adding them would redact every "4096" or "true" from the logs.
 */
function looksLikeSetting(value: string): boolean {
  return value.length < 4 || /^\d{1,6}$/.test(value) || /^(true|false|yes|no|on|off|none|null)$/i.test(value);
}

/**
 * The credential parts of a value stored under a secret-looking name: the whole value,
 * and for `Authorization: Bearer xyz` also `xyz` on its own.
 */
export function credentialParts(value: string): string[] {
  if (looksLikeSetting(value)) return [];
  const parts = [value];
  const scheme = /^(?:bearer|basic|token|bot)\s+(\S+)$/i.exec(value.trim());
  if (scheme?.[1] !== undefined && !looksLikeSetting(scheme[1])) parts.push(scheme[1]);
  return parts;
}

/** Credentials inside a URL: the password of `user:pass@host` and secret-named query values. */
export function urlCredentials(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const found: string[] = [];
  if (parsed.password !== "") found.push(parsed.password, safeDecode(parsed.password));
  for (const [name, value] of parsed.searchParams) {
    if (isSecretName(name)) found.push(...credentialParts(value));
  }
  return found;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Whether some string of `value` (keys too) passes `test`: a walk, no copy. Past
 * {@link MAX_REDACT_DEPTH} it cannot tell, and says yes: {@link redactValue} then takes what is
 * that deep out, so nothing hides below the bound.
 */
export function someString(value: unknown, test: (text: string) => boolean, depth = 0): boolean {
  if (typeof value === "string") return test(value);
  if (value === null || typeof value !== "object") return false;
  if (depth >= MAX_REDACT_DEPTH) return true;
  if (Array.isArray(value)) return value.some((item) => someString(item, test, depth + 1));
  for (const [key, item] of Object.entries(value))
    if (test(key) || someString(item, test, depth + 1)) return true;
  return false;
}

/** `value` with `redact` applied to every string (keys too); the same object when nothing changed. */
export function redactValue<T>(value: T, redact: (text: string) => string, depth = 0): T {
  if (typeof value === "string") return redact(value) as T;
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_REDACT_DEPTH) return REDACTED as T;
  if (Array.isArray(value)) {
    const items = value.map((item) => redactValue(item, redact, depth + 1));
    return (items.some((item, i) => item !== value[i]) ? items : value) as T;
  }
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const cleanKey = redact(key);
    const clean = redactValue(item, redact, depth + 1);
    if (cleanKey !== key || clean !== item) changed = true;
    out[cleanKey] = clean;
  }
  return (changed ? out : value) as T;
}
