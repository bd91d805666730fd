import { createHash } from "node:crypto";

/**
 * What stands in an audit line for a string (or, last, a whole `arguments`, `result` or `error`,
 * as its JSON) too long for the line: its length in characters, the SHA-256 of its UTF-8 text in
 * hex, and its first characters. The text is the redacted one: a digest never confirms a secret.
 */
export interface CutValue {
  cut: true;
  length: number;
  sha256: string;
  head: string;
}

/** Strings longer than this are cut first, wherever they are. */
const LONG_CHARS = 1024;
/** Characters of a cut string kept in `head`. */
const HEAD_CHARS = 256;
/** The last resort: every string over this many characters, with a shorter head. */
const LAST_LONG_CHARS = 64;
const LAST_HEAD_CHARS = 16;

/** The fields of a record that hold what the client sent or got: cut whole when cutting strings was not enough. */
const CONTENT_FIELDS = ["arguments", "result", "error"];

/**
 * `record` as one JSON line (with its newline) of at most `maxLine` bytes: as it is when it fits;
 * else with every string over 1024 characters cut to a {@link CutValue}; else also with its
 * content (`arguments`, `result`, `error`) cut whole; else also with every string over 64
 * characters cut. The last step always fits from 16 KiB up: the record's own fields are few.
 * Throws what `JSON.stringify` throws (a cycle, a BigInt).
 *
 * @example
 * cappedLine({ method: "tools/call", target: "x".repeat(4_000_000) }, 65_536)
 * // {"method":"tools/call","target":{"cut":true,"length":4000000,"sha256":"…","head":"xxx…"}}\n
 */
export function cappedLine(record: Record<string, unknown>, maxLine: number): string {
  const line = `${JSON.stringify(record)}\n`;
  if (fits(line, maxLine)) return line;
  const cuts = new WeakSet<object>();
  const shortened = cutStrings(record, LONG_CHARS, HEAD_CHARS, cuts) as Record<string, unknown>;
  const shorter = `${JSON.stringify(shortened)}\n`;
  if (fits(shorter, maxLine)) return shorter;
  for (const field of CONTENT_FIELDS) {
    if (shortened[field] === undefined) continue;
    const cut = cutOf(JSON.stringify(record[field]) ?? "", HEAD_CHARS);
    cuts.add(cut);
    shortened[field] = cut;
  }
  const without = `${JSON.stringify(shortened)}\n`;
  if (fits(without, maxLine)) return without;
  return `${JSON.stringify(cutStrings(shortened, LAST_LONG_CHARS, LAST_HEAD_CHARS, cuts))}\n`;
}

/** A JSON text is at most 3 bytes of UTF-8 per UTF-16 unit: most lines are told apart without encoding them. */
function fits(line: string, maxLine: number): boolean {
  return line.length * 3 <= maxLine || Buffer.byteLength(line) <= maxLine;
}

/** A copy of `value` with each string longer than `over` cut (values already cut are kept as they are). */
function cutStrings(value: unknown, over: number, head: number, cuts: WeakSet<object>): unknown {
  if (typeof value === "string") {
    if (value.length <= over) return value;
    const cut = cutOf(value, head);
    cuts.add(cut);
    return cut;
  }
  if (typeof value !== "object" || value === null || cuts.has(value)) return value;
  if (Array.isArray(value)) return value.map((item) => cutStrings(item, over, head, cuts));
  // `toJSON` (a Date, say) decides what is written: cut that.
  const plain =
    typeof (value as { toJSON?: unknown }).toJSON === "function" ? JSON.parse(JSON.stringify(value)) : value;
  if (typeof plain !== "object" || plain === null) return cutStrings(plain, over, head, cuts);
  // No prototype: a `__proto__` key the client sent stays a key.
  const copy: Record<string, unknown> = Object.create(null);
  for (const [key, item] of Object.entries(plain)) copy[key] = cutStrings(item, over, head, cuts);
  return copy;
}

function cutOf(text: string, headChars: number): CutValue {
  let head = text.slice(0, headChars);
  // Not half of a surrogate pair.
  if (/[\ud800-\udbff]$/.test(head)) head = head.slice(0, -1);
  return { cut: true, length: text.length, sha256: createHash("sha256").update(text).digest("hex"), head };
}
