import { stat } from "node:fs/promises";
import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { WorkspaceContext } from "./context.js";
import { formatSize, readTextFile } from "./file-content.js";
import { guarded, toolOk } from "./tool-result.js";
import { WorkspaceError } from "./workspace-error.js";
import { writeInsideRoot } from "./write-inside-root.js";

const pathArg = z.string().describe("Path relative to the workspace root");

const readInput = z.object({
  path: pathArg,
  startLine: z.number().int().min(1).optional().describe("First line to return (1-based)"),
  endLine: z.number().int().min(1).optional().describe("Last line to return (1-based, inclusive)"),
});
const readOutput = z.object({
  path: z.string(),
  content: z.string(),
  size: z.number().describe("File size in bytes"),
  startLine: z.number(),
  endLine: z.number(),
  totalLines: z.number().optional(),
  truncated: z.boolean(),
});

const writeInput = z.object({
  path: pathArg,
  content: z.string().describe("The complete new contents (UTF-8)"),
  createParents: z.boolean().optional().describe("Create missing parent directories (default false)"),
});
const writeOutput = z.object({ path: z.string(), bytes: z.number(), created: z.boolean() });

const editInput = z.object({
  path: pathArg,
  edits: z
    .array(
      z.object({
        oldText: z.string().min(1).describe("Exact text to replace; must occur exactly once"),
        newText: z.string().describe("Replacement text"),
      }),
    )
    .min(1)
    .describe("Applied in order; all or none"),
  dryRun: z.boolean().optional().describe("Check and report the edits without writing"),
});
const editOutput = z.object({
  path: z.string(),
  dryRun: z.boolean(),
  bytes: z.number(),
  edits: z.array(z.object({ line: z.number(), removedLines: z.number(), addedLines: z.number() })),
});

/** Register `read_file`, and `write_file` and `edit_file` when the rules allow any write. */
export function registerFileTools(server: McpServer, ctx: WorkspaceContext): void {
  const { wall, limits } = ctx;

  server.registerTool(
    "read_file",
    {
      title: "Read file",
      description: `Read a UTF-8 text file under the workspace root, whole (up to ${formatSize(limits.maxReadBytes)}) or a line range (any size). Binary files are refused.`,
      inputSchema: readInput,
      outputSchema: readOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      guarded(async () => {
        const file = await wall.openFile(args.path);
        try {
          const read = await readTextFile(file, args.path, {
            maxBytes: limits.maxReadBytes,
            ...(args.startLine !== undefined && { startLine: args.startLine }),
            ...(args.endLine !== undefined && { endLine: args.endLine }),
          });
          return toolOk(read.content, { path: file.rel, size: file.size, ...read });
        } finally {
          await file.handle.close();
        }
      }),
  );

  if (!wall.permissions.canWriteAnything) return;

  server.registerTool(
    "write_file",
    {
      title: "Write file",
      description:
        "Create or replace a file under the workspace root atomically (temp file + rename). Parent directories are created only with createParents.",
      inputSchema: writeInput,
      outputSchema: writeOutput,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      guarded(async () => {
        const written = await writeInsideRoot(wall, args.path, args.content, {
          createParents: args.createParents ?? false,
        });
        const verb = written.created ? "Created" : "Replaced";
        return toolOk(`${verb} ${written.rel} (${formatSize(written.bytes)})`, {
          path: written.rel,
          bytes: written.bytes,
          created: written.created,
        });
      }),
  );

  server.registerTool(
    "edit_file",
    {
      title: "Edit file",
      description:
        "Replace exact text in a file. Each oldText must occur exactly once; if any edit fails, nothing is written.",
      inputSchema: editInput,
      outputSchema: editOutput,
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    (args) =>
      guarded(async () => {
        // Checked for write up front, so a read-only path fails before anything is read.
        wall.resolve(args.path, "write");
        const file = await wall.openFile(args.path);
        let original: string;
        let before: { ino: number; mtimeMs: number; size: number };
        try {
          const read = await readTextFile(file, args.path, { maxBytes: limits.maxResourceBytes });
          original = read.content;
          const st = await file.handle.stat();
          before = { ino: st.ino, mtimeMs: st.mtimeMs, size: st.size };
        } finally {
          await file.handle.close();
        }
        const { text, report } = applyEdits(original, args.edits, args.path);
        const bytes = Buffer.byteLength(text, "utf8");
        if (!args.dryRun) {
          const now = await stat(file.abs);
          if (now.ino !== before.ino || now.mtimeMs !== before.mtimeMs || now.size !== before.size) {
            throw new WorkspaceError(
              "race",
              `'${args.path}' changed while it was being edited; nothing was written`,
              {
                path: args.path,
                rule: "path changed between check and use",
              },
            );
          }
          await writeInsideRoot(wall, args.path, text);
        }
        const summary = report
          .map((r, i) => `#${i + 1} at line ${r.line}: -${r.removedLines} +${r.addedLines}`)
          .join("\n");
        return toolOk(
          `${args.dryRun ? "Would apply" : "Applied"} ${report.length} edit(s) to ${file.rel}\n${summary}`,
          {
            path: file.rel,
            dryRun: args.dryRun ?? false,
            bytes,
            edits: report,
          },
        );
      }),
  );
}

interface EditReport {
  line: number;
  removedLines: number;
  addedLines: number;
}

/** Apply exact-text edits in order; throws (changing nothing) when a text is missing or not unique. */
export function applyEdits(
  original: string,
  edits: ReadonlyArray<{ oldText: string; newText: string }>,
  input: string,
): { text: string; report: EditReport[] } {
  let text = original;
  const report: EditReport[] = [];
  edits.forEach((edit, i) => {
    const at = text.indexOf(edit.oldText);
    if (at === -1) {
      throw new WorkspaceError(
        "edit-failed",
        `Edit #${i + 1}: oldText was not found in '${input}'; nothing was written`,
        {
          path: input,
        },
      );
    }
    const again = text.indexOf(edit.oldText, at + 1);
    if (again !== -1) {
      const lines = [lineAt(text, at), lineAt(text, again)];
      throw new WorkspaceError(
        "edit-failed",
        `Edit #${i + 1}: oldText occurs more than once in '${input}' (lines ${lines.join(", ")}, ...); include more context to make it unique; nothing was written`,
        { path: input },
      );
    }
    report.push({
      line: lineAt(text, at),
      removedLines: lineCount(edit.oldText),
      addedLines: lineCount(edit.newText),
    });
    text = text.slice(0, at) + edit.newText + text.slice(at + edit.oldText.length);
  });
  return { text, report };
}

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < index; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

function lineCount(text: string): number {
  if (text === "") return 0;
  const n = text.split("\n").length;
  return text.endsWith("\n") ? n - 1 : n;
}
