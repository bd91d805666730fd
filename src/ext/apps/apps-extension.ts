/**
 * MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`): a tool's `_meta.ui` names a `ui://`
 * resource holding an app's HTML, which a client that renders apps shows (the dashboard's
 * playground in `app-frame.ts`). The gateway passes apps on: it declares the extension to its
 * servers, declares it to its clients when a server does, and lists the tools only an app calls
 * to clients that render apps. (The `ui://` URIs' namespaces, and which tools are app-only, are
 * the catalog's: src/catalog/namespaced-uris.ts, `CatalogTool.appOnly`.)
 */
import { declaredExtension } from "../../protocol/extensions.js";

/** The MCP Apps extension's identifier (`_meta.ui`, `ui://` resources). */
export const UI_EXTENSION = "io.modelcontextprotocol/ui";

/** The MIME type of an MCP App's HTML (`ui://` resources). */
export const APP_MIME_TYPE = "text/html;profile=mcp-app";

/**
 * The extensions a gateway declares to its servers as a client: MCP Apps, since it passes apps
 * on to the clients that render them (servers often list their app tools only to such clients).
 */
export const RELAYED_EXTENSIONS: Record<string, unknown> = { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } };

/** Whether a client declared the MCP Apps extension (it renders `ui://` apps). */
export function rendersApps(capabilities: Record<string, unknown>): boolean {
  return declaredExtension(capabilities, UI_EXTENSION) !== undefined;
}
