import { LlmError } from "../agent/llm-error.js";
import { ConfigError, McplexError, type McplexErrorCode, RpcError } from "../errors.js";
import { ErrorCode } from "../protocol/error-codes.js";

/** Process exit codes of the CLI. */
export const EXIT = { ok: 0, toolError: 1, usage: 2, unavailable: 3, error: 1 } as const;

/** One of the documented {@link EXIT} codes. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A mistake in how the CLI was called. */
export class UsageError extends Error {
  override name = "UsageError";
  /** Where to read the usage: `run "mcplex serve --help" for usage`; the CLI's overview when unset. */
  hint: string | undefined;

  constructor(message: string, options: ErrorOptions & { hint?: string } = {}) {
    super(message, options);
    this.hint = options.hint;
  }
}

/** What a failed command was doing, so that its error line can name it. */
export interface ErrorContext {
  /** The exposed tool name, as the user typed it. */
  tool?: string;
  /** The server that owns the tool. */
  server?: string;
  /** The tool's name on its server. */
  originalName?: string;
  /** Hides the config's secrets in what is printed. */
  redact?: (text: string) => string;
}

/** An error as the CLI shows it: one line, an optional hint, extra lines for config issues. */
export interface ErrorReport {
  line: string;
  /** One line per problem, when a config file has several. */
  details: string[];
  hint?: string;
  exit: ExitCode;
}

const USAGE_CODES = new Set<McplexErrorCode>([
  "CONFIG_INVALID",
  "CONFIG_NOT_FOUND",
  "CONFIG_VARIABLE_MISSING",
  "SECRET_MISSING",
  "SECRET_STORE_INVALID",
  "SECRET_KEY_INVALID",
  "TOOL_NOT_FOUND",
  "RESOURCE_NOT_FOUND",
  "PROMPT_NOT_FOUND",
  "INVALID_ARGUMENT",
  "AUDIT_OPEN_FAILED",
  "REGISTRY_NOT_FOUND",
  "REGISTRY_AMBIGUOUS",
  "RUNTIME_MISSING",
  "REGISTRY_ENTRY_REFUSED",
]);

const RPC_HINTS: Record<number, string> = {
  [ErrorCode.InvalidParams]: "check the arguments against the tool's inputSchema (`mcplex list --json`)",
  [ErrorCode.MethodNotFound]:
    "the server does not implement this method; `mcplex doctor` shows what it speaks",
  [ErrorCode.UrlElicitationRequired]:
    "the server needs you to open a URL first; use a client that handles elicitation",
};

/**
 * The exit code an error maps to: 2 for usage, config and secret-store mistakes (the fix is
 * in the command line or a file), 3 when a server or the LLM cannot be reached or used,
 * 1 for a call the server answered with an error, and for anything unexpected.
 */
export function exitCodeOf(error: unknown): ExitCode {
  if (error instanceof UsageError) return EXIT.usage;
  if (error instanceof RpcError) return EXIT.toolError;
  if (error instanceof LlmError) {
    // A refused key or an unknown model is fixed in the config; the rest is the LLM's side.
    const status = error.status ?? 0;
    return status === 401 || status === 403 || status === 404 ? EXIT.usage : EXIT.unavailable;
  }
  if (error instanceof McplexError) {
    if (USAGE_CODES.has(error.code)) return EXIT.usage;
    if (error.code === "REQUEST_ABORTED") return EXIT.error;
    return EXIT.unavailable;
  }
  return EXIT.error;
}

/**
 * How the CLI reports `error`: a line naming what failed (server, tool), the message and the
 * error's code, a hint where there is one. Never a stack trace: see {@link printError}.
 *
 * @example
 * errorReport(new RpcError(-32603, "boom"), { tool: "api__lookup", server: "api", originalName: "lookup" }).line
 * // 'api__lookup: server "api" answered tool "lookup" with error -32603: boom'
 */
export function errorReport(error: unknown, context: ErrorContext = {}): ErrorReport {
  const redact = context.redact ?? ((text: string) => text);
  const exit = exitCodeOf(error);
  const subject = context.tool === undefined ? "" : `${context.tool}: `;
  if (error instanceof RpcError) {
    const server = context.server ?? error.server;
    const who = server === undefined ? "the server" : `server "${server}"`;
    const tool = context.originalName ?? context.tool;
    const what = tool === undefined ? "" : ` tool "${tool}"`;
    const line = `${subject}${who} answered${what} with error ${error.code}: ${oneLine(error.message)}`;
    const hint = RPC_HINTS[error.code];
    return { line: redact(line), details: [], ...(hint === undefined ? {} : { hint }), exit };
  }
  if (error instanceof McplexError) {
    const issues = error instanceof ConfigError && error.issues.length > 1 ? error.issues : [];
    let message = issues.length > 0 ? firstLine(error.message) : oneLine(error.message);
    if (
      issues.length === 0 &&
      error.path !== undefined &&
      error.path !== "" &&
      !message.includes(error.path)
    ) {
      message = `${error.path}: ${message}`;
    }
    // Upstream messages start with the bare server name ("fx: tools/call timed out"): say what it is.
    if (error.server !== undefined && message.startsWith(`${error.server}: `)) {
      message = message.slice(error.server.length + 2);
    }
    const server =
      error.server !== undefined && !message.includes(`"${error.server}"`)
        ? `server "${error.server}": `
        : "";
    return {
      line: redact(`${subject}${server}${message} [${error.code}]`),
      details: issues.map((issue) => redact(`${issue.path}: ${issue.message}`)),
      ...(error.hint === undefined || message.includes(error.hint) ? {} : { hint: redact(error.hint) }),
      exit,
    };
  }
  if (error instanceof UsageError) {
    return { line: error.message, details: [], hint: error.hint ?? 'run "mcplex --help" for usage', exit };
  }
  const name = error instanceof Error ? error.name : "Error";
  // Node's `fetch failed` says why only in its cause (ECONNREFUSED, a bad certificate...).
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
  const message = error instanceof Error ? error.message + cause : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  return {
    line: redact(`${subject}${name}: ${oneLine(message)}${typeof code === "string" ? ` [${code}]` : ""}`),
    details: [],
    hint: "this is unexpected: run again with MCPLEX_DEBUG=1 and report the stack trace it prints",
    exit,
  };
}

function firstLine(text: string): string {
  return text.split("\n")[0] ?? "";
}

/**
 * A message on one line: its first line, then what follows (a server's stderr tail) joined,
 * keeping the end, where a failing program says why.
 */
function oneLine(text: string): string {
  const lines = text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !/^--- .* ---$/.test(line));
  const [first = "", ...rest] = lines;
  if (rest.length === 0) return first;
  const tail = rest.join(" / ");
  return `${first} (${tail.length > 300 ? `…${tail.slice(-300)}` : tail})`;
}
