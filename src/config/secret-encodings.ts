/**
 * Shortest encoded form worth hunting for. A base64 fragment of a few characters turns up by
 * chance in any long base64 text (an image, a hash), so shorter ones are left alone.
 */
const ENCODED_MIN_LENGTH = 8;

/**
 * The forms in which a server may print a secret besides the raw value: JSON string escape
 * (plain and ASCII-only `\uXXXX`), percent-encoding, base64 and base64url. For base64 this
 * covers the secret standing alone (with and without padding) and the secret inside a longer
 * base64 text at each of the three byte alignments: there only the characters made of the
 * secret's bits alone are matched, so up to two characters on each side of the redaction (a
 * few bits of the secret's first and last byte) stay visible.
 *
 * Not covered: other escapes (`\/`, uppercase-only or lowercase percent hex, `+` for space),
 * base64 wrapped across lines, hex, and encodings of an encoding.
 *
 * @example
 * encodedForms('a"b/c+d') // ['a\\"b/c+d', 'a%22b%2Fc%2Bd', 'YSJiL2MrZA==', ...]
 */
export function encodedForms(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  const forms = new Set<string>([
    JSON.stringify(secret).slice(1, -1),
    asciiJson(secret),
    encodeURIComponent(secret),
  ]);
  for (const alphabet of ["base64", "base64url"] as const) {
    forms.add(bytes.toString(alphabet));
    for (let offset = 0; offset < 3; offset++) forms.add(alignedBase64(bytes, offset, alphabet));
  }
  forms.delete(secret);
  return [...forms].filter((form) => form.length >= ENCODED_MIN_LENGTH);
}

/**
 * The base64 characters that encode only the secret's bits when it starts `offset` bytes into
 * a group of three: any base64 text holding the secret at that alignment contains them.
 */
function alignedBase64(bytes: Buffer, offset: number, alphabet: "base64" | "base64url"): string {
  const text = Buffer.concat([Buffer.alloc(offset), bytes])
    .toString(alphabet)
    .replace(/=+$/, "");
  const first = Math.ceil((8 * offset) / 6);
  const end = Math.floor((8 * (offset + bytes.length)) / 6);
  return text.slice(first, end);
}

/** JSON escape with every non-ASCII character as `\uXXXX`, as Python's `json.dumps` writes it. */
function asciiJson(secret: string): string {
  return JSON.stringify(secret)
    .slice(1, -1)
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
