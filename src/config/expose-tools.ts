import type { McplexConfig, ProfileConfig, TokenConfig, ToolFilter } from "./types.js";

/**
 * The profile `--expose-tool` serves to clients that name none. Not a name a config file can
 * give a profile (names do not start with "-"), so it never shadows one.
 */
export const EXPOSED_PROFILE = "--expose-tool";

/**
 * A config whose every view serves only the tools whose exposed names match one of `globs`
 * (`--expose-tool`): each profile keeps its own filters and is narrowed to the globs, and
 * {@link EXPOSED_PROFILE} is added for clients without a profile. It goes through the profile
 * machinery, so listings, calls, resources and prompts follow it everywhere (a profile that
 * allows tools reaches only the servers of those tools). No globs: the config as it is.
 *
 * @example
 * const served = exposeTools(config, ["memory__read_*"]);
 * await serve({ config: served, transport: "stdio", profile: EXPOSED_PROFILE });
 */
export function exposeTools(config: McplexConfig, globs: readonly string[]): McplexConfig {
  if (globs.length === 0) return config;
  const profiles: Record<string, ProfileConfig> = {};
  for (const [name, profile] of Object.entries(config.profiles))
    profiles[name] = { ...profile, tools: narrow(profile.tools, globs) };
  profiles[EXPOSED_PROFILE] = { tools: { allow: [...globs] } };
  return { ...config, profiles, tokens: exposedTokens(config.tokens, globs) };
}

/**
 * Tokens bound to no profile are bound to {@link EXPOSED_PROFILE}, keeping what an unbound
 * token may do besides (the operator endpoints).
 */
export function exposedTokens(tokens: readonly TokenConfig[], globs: readonly string[]): TokenConfig[] {
  if (globs.length === 0) return [...tokens];
  return tokens.map((token) =>
    token.profile === undefined ? { ...token, profile: EXPOSED_PROFILE, operator: true } : token,
  );
}

/** `filter` and the globs both: a tool must pass the profile's own lists and match a glob. */
function narrow(filter: ToolFilter, globs: readonly string[]): ToolFilter {
  if (filter.allow === undefined) return { ...filter, allow: [...globs] };
  // Two allow lists cannot be one list; a negated extglob denies what none of the globs match.
  return { ...filter, deny: [...(filter.deny ?? []), `!(${globs.join("|")})`] };
}
