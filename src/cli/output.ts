import { McplexError } from "../errors.js";

/** Process exit codes of the CLI. */
export const EXIT = { ok: 0, toolError: 1, usage: 2, unavailable: 3, error: 1 } as const;

/** A mistake in how the CLI was called. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** Prints an error to stderr: message, config path and hint, never a stack for known errors. */
export function printError(error: unknown): void {
  if (error instanceof McplexError) {
    const lines = [`mcplex: ${error.message}`];
    if (error.path !== undefined && !error.message.includes(error.path)) lines.push(`  at: ${error.path}`);
    const issues = (error as { issues?: Array<{ path: string; message: string }> }).issues;
    if (Array.isArray(issues) && issues.length > 1) {
      for (const issue of issues) lines.push(`  - ${issue.path}: ${issue.message}`);
    }
    if (error.hint !== undefined && !error.message.includes(error.hint)) lines.push(`  hint: ${error.hint}`);
    console.error(lines.join("\n"));
    return;
  }
  if (error instanceof UsageError) {
    console.error(`mcplex: ${error.message}\nRun "mcplex --help" for usage.`);
    return;
  }
  console.error(`mcplex: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
}

/** Reads all of stdin as text (for secrets given on a pipe). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
