import { McplexError, type McplexErrorCode } from "../errors.js";

/** Why the workspace refused or failed an operation. */
export type WorkspaceErrorReason =
  | "outside-root"
  | "denied"
  | "invalid-path"
  | "not-found"
  | "not-a-file"
  | "not-a-directory"
  | "binary"
  | "too-large"
  | "exists"
  | "edit-failed"
  | "race"
  /** A search regex ran past its time limit. */
  | "too-slow";

/**
 * The stable {@link McplexErrorCode} of each reason: what a program may act on (not found,
 * denied, a lost race worth retrying, too slow, too large); the other reasons are mistakes in
 * the request, `INVALID_ARGUMENT`.
 */
export const WORKSPACE_ERROR_CODES = {
  "outside-root": "WORKSPACE_DENIED",
  denied: "WORKSPACE_DENIED",
  "invalid-path": "INVALID_ARGUMENT",
  "not-found": "WORKSPACE_NOT_FOUND",
  "not-a-file": "INVALID_ARGUMENT",
  "not-a-directory": "INVALID_ARGUMENT",
  binary: "INVALID_ARGUMENT",
  "too-large": "WORKSPACE_TOO_LARGE",
  exists: "INVALID_ARGUMENT",
  "edit-failed": "INVALID_ARGUMENT",
  race: "WORKSPACE_RACE",
  "too-slow": "WORKSPACE_TOO_SLOW",
} as const satisfies Record<WorkspaceErrorReason, McplexErrorCode>;

/**
 * A refused or failed workspace operation. `path` is the path as the caller gave it
 * (relative to the root where possible) and `rule` names the rule that decided,
 * such as `root boundary` or `rule #2 {"pattern":"out/**","ops":["read","write"]}`. `code`
 * follows `reason` (see {@link WORKSPACE_ERROR_CODES}); a `race` is `retryable`.
 *
 * @example
 * try { wall.resolve("../etc/passwd", "read") }
 * catch (e) { if (e instanceof WorkspaceError && e.reason === "outside-root") refuse(e.message) }
 */
export class WorkspaceError extends McplexError {
  readonly reason: WorkspaceErrorReason;
  readonly rule?: string;

  constructor(
    reason: WorkspaceErrorReason,
    message: string,
    fields: {
      path: string;
      rule?: string;
      /**
       * Overrides the code of `reason`: a root the server cannot serve is a mistake in its
       * options (`INVALID_ARGUMENT`), not a path a caller asked for.
       */
      code?: McplexErrorCode;
    },
    options?: { cause?: unknown },
  ) {
    // The rule is part of the message too: a model reading the tool error should see why.
    const shown =
      fields.rule !== undefined && !message.includes(fields.rule)
        ? `${message} (rule: ${fields.rule})`
        : message;
    const code = fields.code ?? WORKSPACE_ERROR_CODES[reason];
    super(code, shown, { path: fields.path, retryable: reason === "race" }, options);
    this.reason = reason;
    if (fields.rule !== undefined) this.rule = fields.rule;
  }
}
