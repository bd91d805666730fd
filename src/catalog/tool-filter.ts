import picomatch from "picomatch";
import type { ToolFilter } from "../config/types.js";

/** A compiled allow/deny filter: `true` when the name may be exposed. */
export type NameMatcher = (name: string) => boolean;

const GLOB_OPTIONS: picomatch.PicomatchOptions = { dot: true };

const allowAll: NameMatcher = () => true;

// Tool names are flat strings, not paths: hide `/` from picomatch (in globs and names alike) so
// that `*` matches across it.
const SLASH = /\//g;
const STAND_IN = "\uE000";

function globs(patterns: readonly string[]): NameMatcher {
  const match = picomatch(
    patterns.map((p) => p.replace(SLASH, STAND_IN)),
    GLOB_OPTIONS,
  );
  return (name) => match(name.replace(SLASH, STAND_IN));
}

/**
 * Compiles a {@link ToolFilter} into a predicate. Deny wins over allow; an absent `allow` allows
 * everything, an empty `allow: []` allows nothing (it was written on purpose). Globs are picomatch
 * globs with `dot: true`, and names are treated as flat strings: `*` matches any run of characters,
 * dots and slashes included (`git*` matches `git.log` and `git/log`).
 *
 * What the globs are matched against is the caller's choice: the catalog matches a server's filter
 * against the tool's original name, and a profile's filter against the exposed name.
 *
 * @example
 * const visible = compileToolFilter({ allow: ["read_*"], deny: ["read_secret*"] });
 * visible("read_file"); // true
 */
export function compileToolFilter(filter: ToolFilter | undefined): NameMatcher {
  const allow = filter?.allow;
  const deny = filter?.deny;
  if (allow === undefined && (deny === undefined || deny.length === 0)) return allowAll;
  const allowed: NameMatcher =
    allow === undefined ? allowAll : allow.length === 0 ? () => false : globs(allow);
  if (deny === undefined || deny.length === 0) return allowed;
  const denied = globs(deny);
  return (name) => !denied(name) && allowed(name);
}
