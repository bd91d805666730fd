import { type ErrorContext, type ExitCode, errorReport } from "./error-report.js";
import { terminalText } from "./terminal-text.js";

export { EXIT, type ExitCode, UsageError } from "./error-report.js";

let debug = process.env.MCPLEX_DEBUG === "1";

/** Makes {@link printError} print stack traces too (`--debug`, or `MCPLEX_DEBUG=1`): for maintainers. */
export function setDebug(on: boolean): void {
  debug = on;
}

/** Whether debug lines are printed (`--debug`, or `MCPLEX_DEBUG=1`). */
export function isDebug(): boolean {
  return debug;
}

/**
 * Prints an error to stderr as one `mcplex:` line (plus a `hint:` line, and one line per
 * problem of a config file) and returns the exit code it maps to. Stack traces only in debug mode.
 */
export function printError(error: unknown, context: ErrorContext = {}): ExitCode {
  const report = errorReport(error, context);
  const lines = [`mcplex: ${report.line}`, ...report.details.map((d) => `  - ${d}`)];
  if (report.hint !== undefined) lines.push(`  hint: ${report.hint}`);
  if (debug) lines.push(stackOf(error));
  // An error often quotes a server, a registry or a provider: shown, never obeyed by the terminal.
  console.error(terminalText(lines.join("\n")));
  return report.exit;
}

/** The stack, and the stacks of its causes. */
function stackOf(error: unknown): string {
  const parts: string[] = [];
  for (let e = error, depth = 0; e !== undefined && depth < 5; depth++) {
    parts.push(e instanceof Error ? (e.stack ?? e.message) : String(e));
    e = e instanceof Error ? e.cause : undefined;
    if (e !== undefined) parts.push("caused by:");
  }
  return parts.join("\n");
}

/** Reads all of stdin as text (for secrets given on a pipe). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
