import type { Writable } from "node:stream";
import type { AuditConfig } from "../config/types.js";
import type { AuditBacklog, AuditSink } from "./audit-sink.js";
import { RotatingFile } from "./rotating-file.js";
import { StreamSink } from "./stream-sink.js";

/**
 * The sink an `audit:` block names: the process's stderr (`to: stderr`, or `stderr` given) or
 * a rotating file, opened now so that a file that cannot be opened stops the start
 * (`AUDIT_OPEN_FAILED`, naming the path and the reason).
 */
export async function openAuditSink(
  config: AuditConfig,
  options: AuditBacklog & { stderr?: Writable } = {},
): Promise<AuditSink> {
  const { stderr, ...backlog } = options;
  if (config.to === "stderr") return new StreamSink(stderr ?? process.stderr, "stderr", backlog);
  return RotatingFile.open(config.to, {
    ...backlog,
    maxSize: config.maxSize,
    keep: config.keep,
    ...(config.keepFor === undefined ? {} : { keepFor: config.keepFor }),
  });
}
