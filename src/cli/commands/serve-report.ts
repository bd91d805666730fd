import type { ServeEvent } from "../../assembly/serve.js";
import type { AuditSinkEvent } from "../../audit/audit-sink.js";
import type { SimulatedServer } from "../../recording/simulated-servers.js";
import { isDebug } from "../output.js";

/** Says at start which servers are stand-ins, and which have nothing to stand in with. */
export function printSimulated(simulated: readonly SimulatedServer[]): void {
  for (const { server, from, source } of simulated) {
    if (from === "nothing")
      console.error(
        `mcplex: ${server} cannot be simulated: no recording and no cached tool list (run it once with \`mcplex serve\`, or record it with --record DIR)`,
      );
    else
      console.error(
        `mcplex: ${server} is SIMULATED from its ${from === "recording" ? "recording" : "cached tool list"} (${source})`,
      );
  }
}

/** What serving reports, as lines for people on stderr. */
export function printEvent(event: ServeEvent): void {
  if (event.type === "cluster") {
    const e = event.event;
    if (e.type === "redis-down")
      console.error(
        `mcplex: warning: Redis is out of reach (${e.error}); forwarding uses the last known replicas and rate limits hold per replica until it returns`,
      );
    else if (e.type === "redis-up") console.error("mcplex: Redis reached again; cluster state shared again");
    else console.error(`mcplex: warning: replicas ${e.replicas.join(", ")} serve a different config`);
    return;
  }
  if (isAuditEvent(event)) {
    printAuditEvent(event);
    return;
  }
  if (event.type === "auth") {
    console.error(`mcplex: warning: ${event.message}`);
    return;
  }
  if (event.type === "record-failed") {
    console.error(`mcplex: recording of ${event.server} stopped: ${event.error}`);
    return;
  }
  if (event.type === "pin-lock-unreadable") {
    console.error(`mcplex: warning: ${event.error}; the approvals read before stay in force`);
    return;
  }
  if (event.type === "policies-failed") {
    console.error(`mcplex: warning: the reloaded policies could not be applied: ${event.error}`);
    return;
  }
  if (event.type === "pin-changes") {
    // Loaded only when a pinned server changed: serve's start path stays as it was.
    void import("../pin-report.js").then(({ pinChangeLines }) => {
      for (const line of pinChangeLines(event.server, event.changes)) console.error(`mcplex: ${line}`);
    });
    return;
  }
  if (event.type === "list-not-implemented") {
    if (isDebug())
      console.error(
        `mcplex: debug: ${event.server} answers ${event.method} with "method not found" though it declares the capability; read as an empty list`,
      );
    return;
  }
  if (event.type === "start-failed") {
    console.error(`mcplex: ${event.server} is ${event.state}: ${event.error}`);
    if (event.hint !== undefined) console.error(`  hint: ${event.hint}`);
    return;
  }
  const { outcome } = event;
  if (!outcome.ok) {
    console.error(`mcplex: config not reloaded: ${outcome.error.message}`);
    return;
  }
  const parts: string[] = [];
  if (outcome.added.length + outcome.removed.length + outcome.changed.length > 0) {
    parts.push(`added ${outcome.added.join(", ") || "-"}`, `removed ${outcome.removed.join(", ") || "-"}`);
    if (outcome.changed.length > 0) parts.push(`replaced ${outcome.changed.join(", ")}`);
  }
  if (outcome.profiles) parts.push("profiles updated");
  if (outcome.policies) parts.push("policies and guardrails updated");
  if (event.tokens !== undefined) parts.push(event.tokens);
  if (outcome.serve) parts.push("serve: mode and pin applied, other settings at the next start");
  console.error(`mcplex: config reloaded: ${parts.join("; ")}`);
}

function isAuditEvent(event: ServeEvent): event is AuditSinkEvent {
  return event.type.startsWith("audit-");
}

/** Says what goes wrong (and right again) with the audit trail. */
function printAuditEvent(event: AuditSinkEvent): void {
  switch (event.type) {
    case "audit-write-failed":
      console.error(
        `mcplex: warning: cannot write the audit trail to ${event.to} (${event.error}); its lines are kept and written again every second, and calls are refused while too many wait`,
      );
      return;
    case "audit-write-resumed":
      console.error(`mcplex: the audit trail is written to ${event.to} again`);
      return;
    case "audit-calls-refused":
      console.error(
        `mcplex: warning: ${event.count} call${event.count === 1 ? "" : "s"} refused (AUDIT_BEHIND): the audit trail to ${event.to} cannot keep up`,
      );
      return;
    case "audit-recent-lines-dropped":
      console.error(
        `mcplex: warning: rotating the audit trail dropped ${event.file} with ${event.lines} line${event.lines === 1 ? "" : "s"}, the newest ${Math.round(event.newestAgeMs / 1000)} s old (younger than audit.keepFor): lines come faster than audit.keep files of audit.maxSize hold; look for a flood of calls, or raise audit.keep or audit.maxSize`,
      );
      return;
    case "audit-lines-lost":
      console.error(
        `mcplex: error: ${event.count} audit line${event.count === 1 ? "" : "s"} could not be written to ${event.to} before stopping: ${event.error}`,
      );
      return;
  }
}
