/**
 * How a run that ended without a value is told: each error names what happened, where in the
 * script when it can, and for a limit, the limit and the option that raises it.
 */
import { CodeModeError, type CodeModeErrorCode } from "./code-mode-error.js";
import type { CodeLimits } from "./limits.js";
import type { PreparedScript } from "./prepare-script.js";

/** What the run had done when it failed. */
export interface RunFacts {
  limits: CodeLimits;
  logs: readonly string[];
  toolCalls: number;
  script: PreparedScript;
  /** Whether the sandbox's memory is at its maximum (then QuickJS may throw `null` for lack of room for an Error). */
  memoryExhausted: () => boolean;
}

const details = (facts: RunFacts) => ({ logs: [...facts.logs], toolCalls: facts.toolCalls });

function bytes(n: number): string {
  if (n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/**
 * The limits a running script can reach (`maxParallelCalls` only makes calls wait; the queue's
 * bounds, `queueMs` and `maxQueued`, are met before it runs: see sandbox-queue.ts).
 */
type ReachableLimit = Exclude<keyof CodeLimits, "maxParallelCalls" | "queueMs" | "maxQueued">;

const LIMITS: Record<
  ReachableLimit,
  { code: CodeModeErrorCode; message: (l: CodeLimits) => string; fix: string }
> = {
  wallMs: {
    code: "CODE_TIMEOUT",
    message: (l) => `The script ran longer than its time limit of ${l.wallMs} ms`,
    fix: "Do less in one run (call tools in parallel with Promise.all, stop loops earlier)",
  },
  memoryBytes: {
    code: "CODE_MEMORY",
    message: (l) => `The script used more memory than its limit of ${bytes(l.memoryBytes)}`,
    fix: "Keep less in memory (take only the fields you need from tool results)",
  },
  stackBytes: {
    code: "CODE_STACK_OVERFLOW",
    message: (l) => `The script nested or recursed deeper than its stack limit of ${bytes(l.stackBytes)}`,
    fix: "Use a loop instead of deep recursion, and avoid deeply nested literals",
  },
  maxToolCalls: {
    code: "CODE_TOO_MANY_CALLS",
    message: (l) => `The script called tools more than its limit of ${l.maxToolCalls} times`,
    fix: "Call fewer tools per run (filter first, or split the work over several runs)",
  },
  maxOutputBytes: {
    code: "CODE_OUTPUT_TOO_LARGE",
    message: (l) =>
      `The script's console output and return value passed their limit of ${bytes(l.maxOutputBytes)}`,
    fix: "Log and return a summary rather than whole results",
  },
};

/** A limit reached: the code of that limit, a message naming it, a hint naming `limits.<key>`. */
export function limitError(limit: ReachableLimit, facts: RunFacts, cause?: unknown): CodeModeError {
  const { code, message, fix } = LIMITS[limit];
  return new CodeModeError(
    code,
    `${message(facts.limits)} (limits.${limit}).`,
    { ...details(facts), path: `limits.${limit}`, hint: `${fix}, or have the host raise limits.${limit}.` },
    cause === undefined ? undefined : { cause },
  );
}

/** Where in the script a QuickJS stack points first (1-based, columns of line 1 without the wrapper). */
function position(stack: string, script: PreparedScript): { line?: number; column?: number } {
  const match = /script\.js:(\d+)(?::(\d+))?/.exec(stack);
  if (match === null) return {};
  const line = Number(match[1]);
  if (match[2] === undefined) return { line };
  let column = Number(match[2]) - (line === 1 ? script.prefixLength : 0);
  const inserted = script.inserted;
  if (inserted !== undefined && line === inserted.line && column > inserted.column + inserted.length)
    column -= inserted.length;
  return column >= 1 ? { line, column } : { line };
}

/**
 * An error the script threw and did not catch (or the sandbox threw at it): out of memory and
 * stack overflow become their limits; a syntax error QuickJS found at load is CODE_SYNTAX.
 */
export function scriptError(
  facts: RunFacts,
  name: string,
  message: string,
  stack: string,
  atLoad = false,
): CodeModeError {
  // "string too long": past QuickJS's largest string, which only a doubling loop reaches.
  if (name === "InternalError" && (message === "out of memory" || message === "string too long"))
    return limitError("memoryBytes", facts);
  if (name === "" && message === "uncaught null" && facts.memoryExhausted())
    return limitError("memoryBytes", facts);
  // QuickJS says "stack overflow" as an InternalError, or as a SyntaxError from its parsers.
  if (message === "stack overflow") return limitError("stackBytes", facts);
  const at = position(stack, facts.script);
  const where =
    at.line === undefined
      ? ""
      : ` (line ${at.line}${at.column === undefined ? "" : `, column ${at.column}`})`;
  const label = name === "" ? message : `${name}: ${message}`;
  return new CodeModeError(
    atLoad ? "CODE_SYNTAX" : "CODE_ERROR",
    `The script ${atLoad ? "does not parse" : "failed"}: ${label}${where}.`,
    {
      ...details(facts),
      ...at,
      hint: atLoad
        ? "Fix the syntax at that position."
        : "Fix the script, or wrap calls that may fail in try/catch; a tool's error arrives as a thrown Error with the tool's text.",
    },
  );
}

/** The host itself failed while the sandbox ran: its stack ran out (deep nesting), or WebAssembly trapped. */
export function sandboxFailure(facts: RunFacts, error: unknown): CodeModeError {
  if (error instanceof CodeModeError) return error;
  if (error instanceof RangeError) return limitError("stackBytes", facts, error);
  return new CodeModeError(
    "CODE_ERROR",
    `The sandbox failed while running the script: ${error instanceof Error ? error.message : String(error)}.`,
    { ...details(facts), hint: "Run it again; if it fails the same way, simplify the script." },
    { cause: error },
  );
}

/** The caller's signal aborted the run. */
export function cancelledError(facts: RunFacts, reason: unknown): CodeModeError {
  return new CodeModeError(
    "REQUEST_ABORTED",
    "The run was cancelled by its caller.",
    { ...details(facts), hint: "Nothing to fix in the script; run it again if it is still wanted." },
    { cause: reason },
  );
}

/** Nothing is left that could settle what the script awaits. */
export function stalledError(facts: RunFacts, detail?: string): CodeModeError {
  return new CodeModeError(
    "CODE_STALLED",
    `The script is waiting for a promise that nothing will settle${detail === undefined ? "" : ` (${detail})`}: no tool call is in flight and the sandbox has no timers.`,
    {
      ...details(facts),
      hint: "Await the tool calls you start and settle every promise you create; setTimeout does not exist here.",
    },
  );
}
