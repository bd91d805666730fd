/**
 * Extensions a server or client may declare under `capabilities.extensions` (SEP-2133), by
 * identifier. Read without loading anything of the extensions themselves: the hub and the
 * gateway ask who declares what on every listing.
 */

/** The skills extension (SEP-2640): `skills/list`, `skills/get`, `skill://` resources. */
export const SKILLS_EXTENSION = "io.modelcontextprotocol/skills";

/** The settings a server declares under `capabilities.extensions[id]`, if it declares `id`. */
export function declaredExtension(
  capabilities: Record<string, unknown> | undefined,
  id: string,
): Record<string, unknown> | undefined {
  const extensions = capabilities?.extensions as Record<string, unknown> | undefined;
  const settings = extensions?.[id];
  if (settings === undefined || settings === null) return undefined;
  return typeof settings === "object" && !Array.isArray(settings)
    ? (settings as Record<string, unknown>)
    : {};
}
