import { lstat } from "node:fs/promises";
import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { WorkspaceContext } from "./context.js";
import { guarded, toolOk } from "./tool-result.js";
import { type EntryType, walk } from "./walk.js";

const listInput = z.object({
  path: z.string().optional().describe('Directory relative to the workspace root (default ".")'),
  depth: z.number().int().min(1).max(20).optional().describe("How many levels to descend (default 1)"),
  respectGitignore: z
    .boolean()
    .optional()
    .describe("Leave out paths that .gitignore ignores (default false)"),
});
const entrySchema = z.object({
  path: z.string().describe("Path relative to the workspace root"),
  name: z.string(),
  type: z.enum(["file", "directory", "symlink", "other"]),
  size: z.number().describe("Size in bytes (lstat)"),
  depth: z.number(),
});
const listOutput = z.object({ path: z.string(), entries: z.array(entrySchema), truncated: z.boolean() });

/** One entry of a `list_directory` result. */
export interface DirectoryEntry {
  path: string;
  name: string;
  type: EntryType;
  size: number;
  depth: number;
}

/** Register `list_directory`. */
export function registerDirectoryTools(server: McpServer, ctx: WorkspaceContext): void {
  const { wall, limits } = ctx;
  server.registerTool(
    "list_directory",
    {
      title: "List directory",
      description: `List the entries of a directory under the workspace root with their type and size, optionally several levels deep (at most ${limits.maxListEntries} entries). Symlinks are shown, not followed; .git is never shown.`,
      inputSchema: listInput,
      outputSchema: listOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args, extra) =>
      guarded(async () => {
        const dir = await wall.openDirectory(args.path ?? ".");
        const entries: DirectoryEntry[] = [];
        let truncated = false;
        for await (const entry of walk(wall, dir, {
          maxDepth: args.depth ?? 1,
          respectGitignore: args.respectGitignore ?? false,
          signal: extra.mcpReq.signal,
        })) {
          if (entries.length >= limits.maxListEntries) {
            truncated = true;
            break;
          }
          // Through the walk's descriptor: the size of the entry listed, wherever its path leads now.
          const st = await lstat(entry.at).catch(() => undefined);
          if (st === undefined) continue;
          entries.push({
            path: entry.rel,
            name: entry.name,
            type: entry.type,
            size: st.size,
            depth: entry.depth,
          });
        }
        const lines = entries.map((e) => {
          const indent = "  ".repeat(e.depth - 1);
          const tag =
            e.type === "directory" ? "[DIR]" : e.type === "file" ? "[FILE]" : `[${e.type.toUpperCase()}]`;
          return `${indent}${tag} ${e.name}${e.type === "file" ? ` (${e.size} bytes)` : ""}`;
        });
        if (truncated) lines.push(`... truncated at ${limits.maxListEntries} entries`);
        const shown = dir.rel === "" ? "." : dir.rel;
        return toolOk(lines.length > 0 ? lines.join("\n") : `${shown} is empty`, {
          path: shown,
          entries,
          truncated,
        });
      }),
  );
}
