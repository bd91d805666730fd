/**
 * `${user:NAME}`: a value each signed-in user sets for a per-user server (`credentials:
 * per-user`), such as their own API key. Config loading keeps the reference as it is written;
 * the hub fills it for one user when it opens that user's connection.
 */

/** A `${user:NAME}` reference; names as secrets' (`[A-Za-z_][A-Za-z0-9_.-]*`). */
const USER_REFERENCE = /\$\{user:([A-Za-z_][A-Za-z0-9_.-]*)\}/g;

/** Whether `text` holds a `${user:...}` reference (valid or not). */
export function hasUserPlaceholder(text: string): boolean {
  return text.includes("${user:");
}

/** The names of the `${user:NAME}` references in `text`, in order, once each. */
export function userPlaceholderNames(text: string): string[] {
  return [...new Set([...text.matchAll(USER_REFERENCE)].map((m) => m[1]!))];
}

/**
 * `text` with each `${user:NAME}` replaced by `values[NAME]`; `missing` receives each name that
 * has no value (left as written), so that the caller can refuse rather than send a placeholder.
 */
export function fillUserPlaceholders(
  text: string,
  values: Readonly<Record<string, string>>,
  missing: (name: string) => void,
): string {
  if (!hasUserPlaceholder(text)) return text;
  return text.replace(USER_REFERENCE, (whole, name: string) => {
    const value = Object.hasOwn(values, name) ? values[name] : undefined;
    if (value === undefined) {
      missing(name);
      return whole;
    }
    return value;
  });
}
