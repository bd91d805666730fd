import { canonicalJson, PINNED_FIELDS, type PinnedField, type PinnedTool } from "./tool-fingerprint.js";

/** How one pinned field of a tool changed: its text before and after, and a line diff of them. */
export interface FieldChange {
  field: PinnedField;
  /** The field as pinned: the description as it is, anything else as indented JSON; `undefined` when absent. */
  before?: string;
  /** The field as listed now, in the same form. */
  after?: string;
  /** `- ` removed lines, `+ ` added ones, `  ` those kept, in order. */
  diff: string;
}

/** The text of a field for people: descriptions and titles as they are, the rest as indented canonical JSON. */
function fieldText(tool: PinnedTool | undefined, field: PinnedField): string | undefined {
  const value = tool?.[field];
  if (value === undefined) return undefined;
  if (typeof value === "string") return value;
  return JSON.stringify(JSON.parse(canonicalJson(value)), null, 2);
}

/**
 * The fields that differ between a tool as pinned and as listed now (either may be missing: a
 * tool added, or removed), each with a line diff of its text.
 *
 * @example
 * diffTool(pinned, current).map((c) => c.field); // ["description"]
 */
export function diffTool(before: PinnedTool | undefined, after: PinnedTool | undefined): FieldChange[] {
  const changes: FieldChange[] = [];
  for (const field of PINNED_FIELDS) {
    const a = fieldText(before, field);
    const b = fieldText(after, field);
    if (a === b) continue;
    const change: FieldChange = { field, diff: lineDiff(a ?? "", b ?? "") };
    if (a !== undefined) change.before = a;
    if (b !== undefined) change.after = b;
    changes.push(change);
  }
  return changes;
}

/** Larger texts are shown whole, removed then added, rather than spending quadratic time on them. */
const MAX_DIFF_CELLS = 1_000_000;

/** A line diff by longest common subsequence: what a reviewer reads to see what changed. */
export function lineDiff(before: string, after: string): string {
  const a = before === "" ? [] : before.split("\n");
  const b = after === "" ? [] : after.split("\n");
  if (a.length * b.length > MAX_DIFF_CELLS)
    return [...a.map((l) => `- ${l}`), ...b.map((l) => `+ ${l}`)].join("\n");
  // lengths[i][j]: the longest common subsequence of a[i..] and b[j..].
  const lengths: number[][] = Array.from({ length: a.length + 1 }, () =>
    new Array<number>(b.length + 1).fill(0),
  );
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lengths[i]![j] =
        a[i] === b[j] ? lengths[i + 1]![j + 1]! + 1 : Math.max(lengths[i + 1]![j]!, lengths[i]![j + 1]!);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push(`  ${a[i]}`);
      i++;
      j++;
    } else if (lengths[i + 1]![j]! >= lengths[i]![j + 1]!) out.push(`- ${a[i++]}`);
    else out.push(`+ ${b[j++]}`);
  }
  while (i < a.length) out.push(`- ${a[i++]}`);
  while (j < b.length) out.push(`+ ${b[j++]}`);
  return out.join("\n");
}
