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

/**
 * The name of the `${user:NAME}` that `arg` (a stdio server's argument as configured) starts
 * with, when its value would make the argument start with `-`: a value a user chose must never
 * become an option of the server's (`--inject-flag=1`) where the config placed a plain argument.
 * `undefined` when the argument starts otherwise, or its value does not start with `-`.
 */
export function optionFromValue(arg: string, values: Readonly<Record<string, string>>): string | undefined {
  const first = /^\$\{user:([A-Za-z_][A-Za-z0-9_.-]*)\}/.exec(arg)?.[1];
  if (first === undefined) return undefined;
  const value = Object.hasOwn(values, first) ? values[first] : undefined;
  if (value === undefined) return undefined;
  // An empty value hands the start of the argument to what follows it.
  if (value === "") return optionFromValue(arg.slice(`\${user:${first}}`.length), values);
  return value.startsWith("-") ? first : undefined;
}

/**
 * Why a user's `value` for `${user:NAME}` cannot be used by a stdio server with these `args`
 * (as configured), for a form that takes it to say so at once: a value starting with `-` where
 * an argument starts with the placeholder. `undefined` when it can be used.
 */
export function userValueProblem(args: readonly string[], name: string, value: string): string | undefined {
  if (!value.startsWith("-")) return undefined;
  if (!args.some((arg) => optionFromValue(arg, { [name]: value }) === name)) return undefined;
  return `\${user:${name}} may not start with "-": the server takes it as an argument of its own, where it would be read as an option`;
}
