import {
  completable,
  type GetPromptResult,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { completePaths } from "./completion.js";
import type { WorkspaceContext } from "./context.js";
import { fileUri, mimeTypeOf, readTextFile } from "./file-content.js";
import { walk } from "./walk.js";
import { WorkspaceError } from "./workspace-error.js";

/**
 * Register the file prompts: `summarize_file`, `review_change` and `explain_directory`.
 * Their path arguments complete to paths under the root.
 */
export function registerPrompts(server: McpServer, ctx: WorkspaceContext): void {
  const { wall } = ctx;
  const filePath = () =>
    completable(z.string().describe("File path relative to the workspace root"), (value) =>
      completePaths(wall, value),
    );

  server.registerPrompt(
    "summarize_file",
    {
      title: "Summarize a file",
      description: "Ask for a concise summary of one file: purpose, main parts, notable details.",
      argsSchema: z.object({ path: filePath() }),
    },
    async ({ path }) => {
      const text = await fileText(ctx, path);
      return {
        description: `Summary of ${path}`,
        messages: [
          embed(path, text.uri, text.content),
          userText(
            `Summarize ${path}: what it is for, its main parts, and anything surprising or risky. Keep it under 200 words.`,
          ),
        ],
      };
    },
  );

  server.registerPrompt(
    "review_change",
    {
      title: "Review a change",
      description: "Ask for a code review of a file, or of a proposed change (a diff) to it.",
      argsSchema: z.object({
        path: filePath(),
        diff: z
          .string()
          .optional()
          .describe("The change to review, as a unified diff (default: the file as it is)"),
        focus: z.string().optional().describe("What to pay most attention to, e.g. security or naming"),
      }),
    },
    async ({ path, diff, focus }) => {
      const text = await fileText(ctx, path);
      const messages: GetPromptResult["messages"] = [embed(path, text.uri, text.content)];
      if (diff !== undefined && diff !== "")
        messages.push(userText(`Proposed change to ${path}:\n\n\`\`\`diff\n${diff}\n\`\`\``));
      messages.push(
        userText(
          `Review ${diff ? "this change to" : ""} ${path} as a careful senior engineer: correctness first, then edge cases, error handling, and clarity.${focus ? ` Focus on: ${focus}.` : ""} List concrete findings with line references; say so plainly if there are none.`,
        ),
      );
      return { description: `Review of ${path}`, messages };
    },
  );

  server.registerPrompt(
    "explain_directory",
    {
      title: "Explain a directory",
      description: "Ask for an overview of a directory from its file tree.",
      argsSchema: z.object({
        path: completable(z.string().describe("Directory relative to the workspace root"), (value) =>
          completePaths(wall, value, { directoriesOnly: true }),
        ),
      }),
    },
    async ({ path }) => {
      const dir = await wall.openDirectory(path || ".").catch(promptError);
      const lines: string[] = [];
      for await (const entry of walk(wall, dir, { maxDepth: 3, respectGitignore: true })) {
        if (lines.length >= 300) break;
        lines.push(`${"  ".repeat(entry.depth - 1)}${entry.name}${entry.type === "directory" ? "/" : ""}`);
      }
      return {
        description: `Overview of ${path || "."}`,
        messages: [
          userText(
            `Here is the tree of ${path || "the workspace root"} (3 levels, .gitignored paths left out):\n\n${lines.join("\n")}\n\nExplain how this directory is organised and where a newcomer should start reading.`,
          ),
        ],
      };
    },
  );
}

async function fileText(ctx: WorkspaceContext, path: string): Promise<{ uri: string; content: string }> {
  const file = await ctx.wall.openFile(path).catch(promptError);
  try {
    const read = await readTextFile(file, path, { maxBytes: ctx.limits.maxReadBytes }).catch(promptError);
    return { uri: fileUri(file.abs), content: read.content };
  } finally {
    await file.handle.close();
  }
}

function embed(path: string, uri: string, text: string): GetPromptResult["messages"][number] {
  const mimeType = mimeTypeOf(path) ?? "text/plain";
  return { role: "user", content: { type: "resource", resource: { uri, text, mimeType } } };
}

function userText(text: string): GetPromptResult["messages"][number] {
  return { role: "user", content: { type: "text", text } };
}

function promptError(error: unknown): never {
  if (error instanceof WorkspaceError)
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message);
  throw error;
}
