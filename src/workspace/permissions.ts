import picomatch from "picomatch";
import type { WorkspaceRule } from "../config/types.js";

/** An operation the workspace permission rules grant: reading (also listing and searching) or writing. */
export type WorkspaceOp = "read" | "write";

/** The outcome of a permission check and the rule that decided it, for error messages. */
export interface PermissionDecision {
  allowed: boolean;
  /** Human-readable name of the deciding rule, e.g. `rule #1 {"pattern":"src/**","ops":["read"]}`. */
  rule: string;
}

/** The rule name used for the built-in `.git` wall. */
export const GIT_RULE = "no access to .git";

/** Whether a root-relative POSIX path is `.git` or lies inside a `.git` directory (at any depth). */
export function isGitPath(rel: string): boolean {
  return rel === ".git" || rel.startsWith(".git/") || rel.includes("/.git/") || rel.endsWith("/.git");
}

/**
 * Glob permission rules of the workspace server. Rules are tried in order and the first
 * whose pattern matches the root-relative POSIX path decides; when none matches, the
 * default applies: read for everything, plus write when `allowWrite` is set.
 * `.git` (and any nested `.git`) is never accessible, whatever the rules say.
 *
 * @example
 * const p = new Permissions([{ pattern: "out/**", ops: ["read", "write"] }]);
 * p.check("out/a.txt", "write").allowed // true
 * p.check("src/a.ts", "write")          // { allowed: false, rule: "default (read-only)" }
 */
export class Permissions {
  readonly rules: readonly WorkspaceRule[];
  readonly allowWrite: boolean;
  private readonly matchers: Array<(path: string) => boolean>;

  constructor(rules: readonly WorkspaceRule[] = [], allowWrite = false) {
    this.rules = rules.map((r) => ({ pattern: r.pattern, ops: [...r.ops] }));
    this.allowWrite = allowWrite;
    this.matchers = this.rules.map((r) => picomatch(stripSlashes(r.pattern), { dot: true }));
  }

  /** Whether any path at all could be written (decides whether write tools are offered). */
  get canWriteAnything(): boolean {
    return this.allowWrite || this.rules.some((r) => r.ops.includes("write"));
  }

  /** Decide `op` on `rel` (root-relative, POSIX separators, `""` for the root itself). */
  check(rel: string, op: WorkspaceOp): PermissionDecision {
    if (isGitPath(rel)) return { allowed: false, rule: GIT_RULE };
    if (rel === "") {
      // The root itself is a directory: it can be listed (entries are checked one by one), never written.
      return { allowed: op === "read", rule: "root directory" };
    }
    for (let i = 0; i < this.matchers.length; i++) {
      if (this.matchers[i]!(rel)) {
        const rule = this.rules[i]!;
        return { allowed: rule.ops.includes(op), rule: `rule #${i + 1} ${JSON.stringify(rule)}` };
      }
    }
    if (op === "read")
      return { allowed: true, rule: this.allowWrite ? "default (allowWrite)" : "default (read-only)" };
    return this.allowWrite
      ? { allowed: true, rule: "default (allowWrite)" }
      : { allowed: false, rule: "default (read-only)" };
  }
}

function stripSlashes(pattern: string): string {
  let p = pattern.startsWith("./") ? pattern.slice(2) : pattern;
  while (p.startsWith("/")) p = p.slice(1);
  return p.endsWith("/") ? `${p}**` : p;
}
