import { PREFIX_SEPARATOR, sanitizeName } from "../catalog/tool-naming.js";
import type { CatalogTool } from "../catalog/types.js";

/** An `available:` server, with its tools as last seen (the shape of the hub's `AvailableServer`). */
export interface AvailableServerTools {
  server: string;
  connected: boolean;
  tools: ReadonlyArray<{ name: string; description?: string; inputSchema?: object }>;
}

/**
 * The tools of the `available:` servers among `servers` that do not run, as catalog entries `search_tools`
 * can index: named as the catalog names tools by default (`server__tool`), marked unavailable.
 * Their names are what the model will find once it has connected the server.
 */
export function availableToolEntries(servers: readonly AvailableServerTools[]): CatalogTool[] {
  const tools: CatalogTool[] = [];
  for (const { server, connected, tools: listed } of servers) {
    if (connected) continue;
    for (const tool of listed) {
      const inputSchema = (tool.inputSchema ?? { type: "object" }) as CatalogTool["inputSchema"];
      const entry: CatalogTool = {
        name: `${sanitizeName(server)}${PREFIX_SEPARATOR}${sanitizeName(tool.name)}`.slice(0, 64),
        originalName: tool.name,
        server,
        inputSchema,
        available: false,
        tool: { name: tool.name, inputSchema },
      };
      if (tool.description !== undefined) entry.description = tool.description;
      tools.push(entry);
    }
  }
  return tools;
}
