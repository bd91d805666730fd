import { ConfigError, type ConfigIssue, type McplexErrorCode } from "../errors.js";
import { redact } from "./redact.js";

/** One step of a config path: a map key or an array index. */
export type PathSegment = string | number;

const PLAIN_SEGMENT = /^[A-Za-z0-9_-]+$/;

/**
 * Joins path segments the way error messages show them: `servers.github.args[2]`.
 * Keys that are not plain words (a server called `my.server`) are quoted: `servers["my.server"]`.
 */
export function joinPath(base: string, segment: PathSegment): string {
  if (typeof segment === "number") return `${base}[${segment}]`;
  if (!PLAIN_SEGMENT.test(segment)) return `${base}[${JSON.stringify(segment)}]`;
  return base === "" ? segment : `${base}.${segment}`;
}

/** Short, safe rendering of a bad value for an error message (redacted later). */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a map";
  const text = typeof value === "string" ? JSON.stringify(value) : String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** The closest candidate within edit distance 2, to turn `comand` into "did you mean "command"?". */
export function suggestKey(key: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of candidates) {
    const d = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance: insertions, deletions and substitutions of one character each. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * Collects every problem of one config file, then throws them as one {@link ConfigError}.
 * Messages are redacted with the secrets seen while reading, so a bad value that came
 * from `${secret:...}` never reaches a terminal or a log.
 */
export class IssueCollector {
  readonly issues: ConfigIssue[] = [];

  constructor(readonly source: string) {}

  /** Records a problem; `message` says what is wrong and how to fix it, without the path. */
  add(path: string, message: string, code: McplexErrorCode = "CONFIG_INVALID"): void {
    this.issues.push({ code, path, message });
  }

  /** Throws a ConfigError listing every recorded issue, if there is any. */
  throwIfAny(secrets: readonly string[]): void {
    if (this.issues.length === 0) return;
    throw configErrorFrom(this.source, this.issues, secrets);
  }
}

/** Builds the ConfigError for a list of issues; the first issue gives `code` and `path`. */
export function configErrorFrom(
  source: string,
  issues: readonly ConfigIssue[],
  secrets: readonly string[] = [],
  cause?: unknown,
): ConfigError {
  const clean = issues.map((issue) => ({ ...issue, message: redact(issue.message, secrets) }));
  const first = clean[0]!;
  const body = (issue: ConfigIssue) =>
    issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`;
  const where = (issue: ConfigIssue) =>
    issue.line === undefined ? "" : `${issue.line}:${issue.column ?? 1}: `;
  // One problem reads like a compiler diagnostic: `file:line:col: path: message`.
  const message =
    clean.length === 1
      ? `${source}:${first.line === undefined ? " " : where(first)}${body(first)}`
      : `${source} has ${clean.length} problems:\n${clean.map((i) => `  - ${where(i)}${body(i)}`).join("\n")}`;
  return new ConfigError(
    message,
    { code: first.code, path: first.path, issues: clean },
    cause === undefined ? undefined : { cause },
  );
}
