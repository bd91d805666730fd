import type { ToolChange } from "../pins/tool-pins.js";

/**
 * How tool changes of a pinned server read for people: one headline, then each change with the
 * fields that differ and, with `diffs`, their line diffs indented below. Empty changes say the
 * server is back as approved.
 */
export function pinChangeLines(server: string, changes: readonly ToolChange[], diffs = true): string[] {
  if (changes.length === 0) return [`${server}: tools as approved (nothing waits for \`mcplex trust\`)`];
  const held = changes.filter((c) => c.held).length;
  const lines = [
    `warning: ${server}: ${changes.length} tool change${changes.length === 1 ? "" : "s"} since approved` +
      (held > 0 ? `, ${held} held out of the catalog` : "") +
      `; review, then run \`mcplex trust ${server}\` (or \`mcplex trust ${server} TOOL\`)`,
  ];
  for (const change of changes) {
    const fields = change.fields.map((f) => f.field).join(", ");
    lines.push(
      `  ${change.kind} ${change.tool}${change.held ? " (held)" : ""}${fields === "" ? "" : `: ${fields}`}`,
    );
    if (!diffs || change.kind !== "changed") continue;
    for (const field of change.fields) {
      lines.push(`    ${field.field}:`);
      for (const line of field.diff.split("\n")) lines.push(`      ${line}`);
    }
  }
  return lines;
}
