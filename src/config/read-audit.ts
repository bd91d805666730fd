import { type ReadContext, resolveReadPath } from "./read-server.js";
import type { AuditConfig } from "./types.js";

/** Default of `audit.maxSize`: 10 MiB. */
export const DEFAULT_AUDIT_MAX_SIZE = 10 * 1024 * 1024;
/** Default of `audit.keep`. */
export const DEFAULT_AUDIT_KEEP = 5;
/** The smallest `audit.maxSize`: below it a file would hold a handful of lines. */
export const MIN_AUDIT_MAX_SIZE = 1024;

/** Default of `audit.maxLine`: 64 KiB. */
export const DEFAULT_AUDIT_MAX_LINE = 64 * 1024;
/** The smallest `audit.maxLine`: room for every field of a record, each cut. */
export const MIN_AUDIT_MAX_LINE = 16 * 1024;

/** The `to` that writes the audit trail on the process's stderr. */
export const AUDIT_TO_STDERR = "stderr";

/**
 * The `audit:` block: `{ to: stderr | FILE, maxSize, keep, content, maxLine, keepFor }`. `to` is required; a
 * relative file is resolved against the config file's directory (write `./stderr` for a file of
 * that name). Every problem is recorded at its exact path (`audit.maxSize`).
 *
 * @example
 * // audit: { to: ./audit.log, maxSize: 10MiB, keep: 5 }
 */
export function readAudit(ctx: ReadContext, value: unknown): AuditConfig | undefined {
  const { reader } = ctx;
  const node = reader.map(value, "audit");
  if (node === undefined) return undefined;
  reader.knownKeys(node, "audit", ["to", "maxSize", "keep", "content", "maxLine", "keepFor"]);
  if (node.to === undefined || node.to === null) {
    reader.fail(
      "audit.to",
      'is required: where the audit lines go, "stderr" or a file such as ./audit.log (relative to this file)',
    );
    return undefined;
  }
  const to = reader.nonEmpty(node.to, "audit.to");
  const maxSize = reader.byteSize(node.maxSize, "audit.maxSize");
  if (maxSize !== undefined && maxSize < MIN_AUDIT_MAX_SIZE)
    reader.fail("audit.maxSize", `must be at least ${MIN_AUDIT_MAX_SIZE} bytes, such as "10MiB"`);
  const keep = reader.count(node.keep, "audit.keep", 0);
  const maxLine = reader.byteSize(node.maxLine, "audit.maxLine");
  if (maxLine !== undefined && maxLine < MIN_AUDIT_MAX_LINE)
    reader.fail("audit.maxLine", `must be at least ${MIN_AUDIT_MAX_LINE} bytes, such as "64KiB"`);
  const keepFor = reader.duration(node.keepFor, "audit.keepFor");
  const content = reader.boolean(node.content, "audit.content");
  if (to === undefined) return undefined;
  return {
    to: reader.probe(to) === AUDIT_TO_STDERR ? to : resolveReadPath(ctx, to),
    maxSize: maxSize ?? DEFAULT_AUDIT_MAX_SIZE,
    keep: keep ?? DEFAULT_AUDIT_KEEP,
    content: content ?? false,
    // Set only when given: a config without them reads as before, and the defaults apply where used.
    ...(maxLine === undefined ? {} : { maxLine }),
    ...(keepFor === undefined ? {} : { keepFor }),
  };
}
