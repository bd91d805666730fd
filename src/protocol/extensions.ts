/**
 * Extensions a server or client may declare under `capabilities.extensions` (SEP-2133), by
 * identifier. Read without loading anything of the extensions themselves: the hub and the
 * gateway ask who declares what on every listing.
 */

/** The skills extension (SEP-2640): `skills/list`, `skills/get`, `skill://` resources. */
export const SKILLS_EXTENSION = "io.modelcontextprotocol/skills";

/** The MCP Apps extension's identifier (`_meta.ui`, `ui://` resources). */
export const UI_EXTENSION = "io.modelcontextprotocol/ui";

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

/** The MIME type of an MCP App's HTML (`ui://` resources). */
export const APP_MIME_TYPE = "text/html;profile=mcp-app";

/**
 * The extensions a gateway declares to its servers as a client: MCP Apps, since it passes apps
 * on to the clients that render them (servers often list their app tools only to such clients).
 */
export const RELAYED_EXTENSIONS: Record<string, unknown> = { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } };
