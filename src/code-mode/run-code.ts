import { McplexError } from "../errors.js";
import { CodeModeError } from "./code-mode-error.js";
import { type CodeLimits, MAX_CODE_LENGTH, resolveLimits } from "./limits.js";
import { prepareScript } from "./prepare-script.js";
import { runInWorker } from "./sandbox-pool.js";
import type { CallTool, RunCodeResult } from "./sandbox-run.js";
import { type CodeTool, toolBindings } from "./tool-bindings.js";

/** What {@link runCode} runs, with what. */
export interface RunCodeOptions {
  /** JavaScript, or TypeScript (types are stripped). A top-level `return`, or else a last statement that is an expression, gives the value. */
  code: string;
  /** The tools the script may call, as `tools.<server>.<name>(args)`; no others are reachable. */
  tools: readonly CodeTool[];
  /** The host's call, by exposed name (through the gateway's pipeline); its signal aborts when the run ends. */
  callTool: CallTool;
  /** Overrides of {@link DEFAULT_LIMITS}. */
  limits?: Partial<CodeLimits>;
  /** Cancels the run and every tool call it has in flight. */
  signal?: AbortSignal;
  /**
   * Whose run it is (a token's key, a client's address): each client has its own queue and
   * share of the sandbox workers, so one client's scripts never hold another's. Runs without
   * one are one client's.
   */
  client?: string;
}

/**
 * Runs a script written by a model in a fresh QuickJS (WebAssembly) runtime, where each tool
 * is an async function: `await tools.github.search_issues({ q: "is:open" })` resolves with the
 * tool's `structuredContent`, else its text (parsed when it is JSON), and throws an Error with
 * the tool's text when the result is `isError`. The sandbox has no network, file system,
 * timers, `process`, `require` or `fetch`: only the language, `console` and `tools`.
 *
 * Rejects with a {@link CodeModeError}: CODE_SYNTAX, CODE_ERROR (an uncaught throw, with its
 * line and column), a limit (CODE_TIMEOUT, CODE_MEMORY, CODE_STACK_OVERFLOW,
 * CODE_TOO_MANY_CALLS, CODE_OUTPUT_TOO_LARGE), CODE_STALLED (awaits what can never settle),
 * CODE_BUSY (no worker within `limits.queueMs`, or `limits.maxQueued` runs of this client
 * waiting already; `retryAt` says when to try again) or REQUEST_ABORTED; with
 * INVALID_ARGUMENT ({@link McplexError}) for bad options.
 *
 * @example
 * const { output } = await runCode({
 *   code: "const r = await tools.github.search_issues({ q: 'bug' }); return r.items.length",
 *   tools: [{ server: "github", name: "search_issues", exposed: "github__search_issues", inputSchema }],
 *   callTool: (name, args, signal) => hub.callTool(name, args, { signal }),
 * });
 */
export async function runCode(options: RunCodeOptions): Promise<RunCodeResult> {
  if (typeof options?.code !== "string")
    throw new McplexError("INVALID_ARGUMENT", "code must be a string of JavaScript or TypeScript.", {
      path: "code",
      hint: "Pass the script's text as `code`.",
    });
  if (options.code.length > MAX_CODE_LENGTH)
    throw new McplexError("INVALID_ARGUMENT", `The script is longer than ${MAX_CODE_LENGTH} characters.`, {
      path: "code",
      hint: "Write a shorter script: loop over data instead of writing it out.",
    });
  if (!Array.isArray(options.tools))
    throw new McplexError("INVALID_ARGUMENT", "tools must be an array.", {
      path: "tools",
      hint: "Pass [] for none.",
    });
  if (typeof options.callTool !== "function")
    throw new McplexError("INVALID_ARGUMENT", "callTool must be a function.", {
      path: "callTool",
      hint: "Pass (exposedName, args, signal) => Promise<CallToolResult>.",
    });
  const limits = resolveLimits(options.limits);
  const bindings = toolBindings(options.tools);
  const script = prepareScript(options.code);
  if (options.signal?.aborted)
    throw new CodeModeError(
      "REQUEST_ABORTED",
      "The run was cancelled by its caller.",
      {},
      { cause: options.signal.reason },
    );
  return runInWorker({
    script,
    bindings,
    callTool: options.callTool,
    limits,
    signal: options.signal,
    client: options.client ?? "",
  });
}
