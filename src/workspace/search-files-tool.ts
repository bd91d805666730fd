import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { WorkspaceContext } from "./context.js";
import { formatSize } from "./file-content.js";
import { searchFiles } from "./search.js";
import { guarded, toolOk } from "./tool-result.js";

const searchInput = z.object({
  pattern: z
    .string()
    .optional()
    .describe(
      'Glob on paths relative to `path`, e.g. "**/*.ts"; without a "/" it matches file names. Default "**"',
    ),
  path: z.string().optional().describe('Directory to search, relative to the workspace root (default ".")'),
  query: z.string().optional().describe("Text to find in file contents (omit to list matching files only)"),
  regex: z.boolean().optional().describe("Treat query as a JavaScript regular expression"),
  caseSensitive: z.boolean().optional().describe("Default true"),
  maxResults: z.number().int().min(1).max(10_000).optional().describe("Most matches or files returned"),
  maxBytes: z.number().int().min(1).optional().describe("Most content bytes read"),
  includeIgnored: z.boolean().optional().describe("Also search .gitignored paths (default false)"),
});
const searchOutput = z.object({
  files: z.array(z.object({ path: z.string(), size: z.number() })),
  matches: z.array(z.object({ path: z.string(), line: z.number(), column: z.number(), text: z.string() })),
  filesScanned: z.number(),
  bytesScanned: z.number(),
  binarySkipped: z.number(),
  truncated: z.boolean(),
  truncatedBy: z.enum(["maxResults", "maxBytes"]).optional(),
});

/** Register `search_files`. */
export function registerSearchFilesTool(server: McpServer, ctx: WorkspaceContext): void {
  const { wall, limits } = ctx;
  server.registerTool(
    "search_files",
    {
      title: "Search files",
      description: `Find files by glob and, with a query, lines by text or regex. Binary and .gitignored files are skipped by default; stops at maxResults (default ${limits.maxSearchResults}) or after maxBytes read (default ${formatSize(limits.maxSearchBytes)}).`,
      inputSchema: searchInput,
      outputSchema: searchOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args, extra) =>
      guarded(async () => {
        const result = await searchFiles(wall, {
          ...args,
          maxResults: args.maxResults ?? limits.maxSearchResults,
          maxBytes: Math.min(args.maxBytes ?? limits.maxSearchBytes, limits.maxSearchBytes),
          regexTimeoutMs: limits.regexTimeoutMs,
          signal: extra.mcpReq.signal,
        });
        const lines =
          args.query === undefined
            ? result.files.map((f) => f.path)
            : result.matches.map((m) => `${m.path}:${m.line}:${m.text}`);
        if (lines.length === 0) lines.push("No matches");
        if (result.truncated) lines.push(`... truncated (${result.truncatedBy})`);
        return toolOk(lines.join("\n"), { ...result });
      }),
  );
}
