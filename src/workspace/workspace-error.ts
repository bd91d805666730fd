import { McplexError } from "../errors.js";

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
 * A refused or failed workspace operation. `path` is the path as the caller gave it
 * (relative to the root where possible) and `rule` names the rule that decided,
 * such as `root boundary` or `rule #2 {"pattern":"out/**","ops":["read","write"]}`.
 *
 * @example
 * try { sandbox.resolve("../etc/passwd", "read") }
 * catch (e) { if (e instanceof WorkspaceError && e.reason === "outside-root") refuse(e.message) }
 */
export class WorkspaceError extends McplexError {
  readonly reason: WorkspaceErrorReason;
  readonly rule?: string;

  constructor(
    reason: WorkspaceErrorReason,
    message: string,
    fields: { path: string; rule?: string },
    options?: { cause?: unknown },
  ) {
    // The rule is part of the message too: a model reading the tool error should see why.
    const shown =
      fields.rule !== undefined && !message.includes(fields.rule)
        ? `${message} (rule: ${fields.rule})`
        : message;
    super("INVALID_ARGUMENT", shown, { path: fields.path }, options);
    this.reason = reason;
    if (fields.rule !== undefined) this.rule = fields.rule;
  }
}
