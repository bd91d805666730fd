/**
 * What a gateway bearer token must be, checked wherever tokens come from (`--token`, the
 * config's `tokens:`, a reload, the library): an empty or short token protects nothing, and
 * one with spaces or non-ASCII characters cannot be sent as is in an `Authorization` header.
 */

/** The shortest token accepted, in characters. */
export const MIN_TOKEN_LENGTH = 16;

const ADVICE = `use a random token of at least ${MIN_TOKEN_LENGTH} characters, e.g. \`openssl rand -hex 32\``;

/**
 * Why `token` cannot be a gateway token, or `undefined` when it can. The answer never
 * contains the token.
 *
 * @example
 * tokenProblem("") // "is empty (an unset variable?); use a random token of at least 16 characters, ..."
 */
export function tokenProblem(token: string): string | undefined {
  if (token === "") return `is empty (an unset variable?); ${ADVICE}`;
  let visible = 0;
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    // RFC 6750 tokens are visible ASCII; a space or a Unicode blank would be cut by clients or proxies.
    if (c < 0x21 || c > 0x7e) {
      if (visible === 0 && token.trim() === "") return `is only whitespace; ${ADVICE}`;
      return `contains a space, control or non-ASCII character (character ${i + 1}); ${ADVICE}`;
    }
    visible++;
  }
  if (token.length < MIN_TOKEN_LENGTH) return `is ${token.length} characters, under the minimum; ${ADVICE}`;
  return undefined;
}
