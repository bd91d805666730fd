/**
 * How `auth.access` rules compare a token's claims: by type, whole values only. A list claim is
 * a list of strings or nothing (a string is never split), an email is one whole, syntactically
 * valid address, and a pattern's `*` is its only wildcard.
 */

/** Longest address taken (RFC 5321 §4.5.3.1.3 bounds a path at 256 octets, brackets included). */
const MAX_EMAIL_LENGTH = 254;

/**
 * A valid email address as the HTML standard defines one (`type=email`): a local part of
 * letters, digits and ``.!#$%&'*+/=?^_`{|}~-``, one `@`, and a domain of dot-separated labels.
 * No spaces, commas, quotes, angle brackets or line breaks: one address, nothing around it.
 */
const EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/** Whether `text` is exactly one valid email address (see {@link EMAIL}). */
export function isEmailAddress(text: string): boolean {
  return text.length <= MAX_EMAIL_LENGTH && EMAIL.test(text);
}

/**
 * Why `pattern` cannot be an `email` pattern, or `undefined`: it must be an address in which `*`
 * stands for part of the local part or of the domain (`*@example.com`, `*@*.example.com`).
 */
export function emailPatternProblem(pattern: string): string | undefined {
  if (isEmailAddress(pattern.replaceAll("*", "a")) && !pattern.includes("**")) return undefined;
  return 'must be one email address, where * stands for any part of the name or the domain (such as "*@example.com" or "*@*.example.com")';
}

/** The list claim as a list of strings, or empty when it is anything else (a string included). */
export function stringList(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.every((item) => typeof item === "string") ? value : [];
}

/**
 * A matcher of whole strings against `patterns`, any of which may match. `*` is the only
 * wildcard: any run of characters (none included), `@` excepted when `email` is set; every
 * other character stands for itself. Email patterns compare without regard to case.
 *
 * @example
 * wholeMatcher(["*@example.com"], { email: true })("Ann@Example.com"); // true
 * wholeMatcher(["*@example.com"], { email: true })("x@evil.com,y@example.com"); // false: not one address
 */
export function wholeMatcher(
  patterns: readonly string[],
  options: { email?: boolean } = {},
): (text: string) => boolean {
  const email = options.email === true;
  const star = email ? "[^@]*" : "[\\s\\S]*";
  const source = patterns
    .map((pattern) =>
      pattern
        .split("*")
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
        .join(star),
    )
    .join("|");
  const regex = new RegExp(`^(?:${source})$`, email ? "i" : "");
  return email ? (text) => isEmailAddress(text) && regex.test(text) : (text) => regex.test(text);
}
