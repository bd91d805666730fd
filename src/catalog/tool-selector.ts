import { compileToolFilter } from "./tool-filter.js";
import type { CatalogTool } from "./types.js";

/** The selectors of a `guardrails:` or `quotas:` entry: each absent one picks all. */
export interface ToolSelectors {
  /** Servers by name. */
  servers?: readonly string[];
  /** Globs over exposed tool names. */
  tools?: readonly string[];
  /** The caller's profile. */
  profiles?: readonly string[];
}

/** Whether an entry's selectors pick a tool for a caller's profile, compiled once. */
export function toolSelector(
  selectors: ToolSelectors,
): (tool: CatalogTool, profile: string | undefined) => boolean {
  const servers = selectors.servers === undefined ? undefined : new Set(selectors.servers);
  const tools =
    selectors.tools === undefined ? undefined : compileToolFilter({ allow: [...selectors.tools] });
  const profiles = selectors.profiles === undefined ? undefined : new Set(selectors.profiles);
  return (tool, profile) =>
    (servers === undefined || servers.has(tool.server)) &&
    (tools === undefined || tools(tool.name)) &&
    (profiles === undefined || (profile !== undefined && profiles.has(profile)));
}
