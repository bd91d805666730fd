import type { AuditSink, AuditSinkEvent } from "../audit/audit-sink.js";
import type { McplexConfig } from "../config/types.js";

/**
 * The audit trail's sink (`audit:`), opened (its code loaded only then), or `undefined` without
 * one. `serve()` opens it first: a file that cannot be opened stops the start before anything runs.
 */
export async function buildAudit(
  config: McplexConfig,
  onEvent: (event: AuditSinkEvent) => void,
): Promise<AuditSink | undefined> {
  if (config.audit === undefined) return undefined;
  return (await import("../audit/open-audit-sink.js")).openAuditSink(config.audit, { onEvent });
}
