import { PREFIX_SEPARATOR, sanitizeName } from "../catalog/tool-naming.js";
import type { CatalogTool } from "../catalog/types.js";

/** A server that does not run now, with the tools it had when it last ran. */
export interface DormantServer {
  server: string;
  connected: boolean;
  tools: ReadonlyArray<{ name: string; description?: string; inputSchema?: object }>;
}

/**
 * The tools of the servers among `servers` that do not run, as catalog entries `search_tools`
 * can index: named as the catalog names tools by default (`server__tool`), marked unavailable.
 * Their names are what the model will find once it has connected the server.
 */
export function dormantTools(servers: readonly DormantServer[]): CatalogTool[] {
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
