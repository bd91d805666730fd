import { type ERROR_CODES, type ErrorFields, McplexError, type McplexErrorCode } from "../errors.js";

/**
 * The codes a code-mode run fails with: those of {@link ERROR_CODES} that start `CODE_` (the
 * script's own failures and its limits, `CODE_BUSY` for a full queue), and `REQUEST_ABORTED`
 * when the caller's signal aborted the run.
 */
export type CodeModeErrorCode = Extract<McplexErrorCode, `CODE_${string}`> | "REQUEST_ABORTED";

/** What a failed run had done before it failed, for the model to read. */
export interface CodeModeErrorDetails {
  /** 1-based position in the script as written, when the error has one. */
  line?: number;
  column?: number;
  /** Console lines written before the failure. */
  logs?: readonly string[];
  /** Tool calls started before the failure. */
  toolCalls?: number;
}

/**
 * A code-mode run that did not end with a value: a syntax error, an uncaught throw, a limit, a
 * cancellation. `message` is written for the model that wrote the script; `hint` says how to
 * fix it, and for a limit which option of {@link CodeLimits} raises it.
 *
 * @example
 * try { await runCode({ code, tools, callTool }) }
 * catch (e) { if (e instanceof CodeModeError && e.code === "CODE_TIMEOUT") ... }
 */
export class CodeModeError extends McplexError {
  declare readonly code: CodeModeErrorCode;
  readonly line?: number;
  readonly column?: number;
  readonly logs: readonly string[];
  readonly toolCalls: number;

  constructor(
    code: CodeModeErrorCode,
    message: string,
    fields: ErrorFields & CodeModeErrorDetails = {},
    options?: { cause?: unknown },
  ) {
    super(code, message, fields, options);
    if (fields.line !== undefined) this.line = fields.line;
    if (fields.column !== undefined) this.column = fields.column;
    this.logs = fields.logs ?? [];
    this.toolCalls = fields.toolCalls ?? 0;
  }
}
