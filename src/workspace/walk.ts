import { closeSync, constants, type Dirent, openSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ignore, { type Ignore } from "ignore";
import { isGitPath } from "./permissions.js";
import type { ResolvedPath, Sandbox } from "./sandbox.js";

/** The kind of a directory entry; symlinks are reported, never followed. */
export type EntryType = "file" | "directory" | "symlink" | "other";

/** One entry met by {@link walk}. */
export interface WalkEntry {
  /** Root-relative POSIX path. */
  rel: string;
  abs: string;
  name: string;
  type: EntryType;
  /** 1 for the entries of the start directory. */
  depth: number;
}

/** Options of {@link walk}. */
export interface WalkOptions {
  /** How deep to go below the start directory (1 = its entries only). */
  maxDepth: number;
  /** Skip paths that `.gitignore` files (from the root down) ignore. */
  respectGitignore: boolean;
  signal?: AbortSignal;
}

interface IgnoreLevel {
  /** Root-relative POSIX path of the directory holding the `.gitignore`. */
  base: string;
  ig: Ignore;
}

const MAX_GITIGNORE_BYTES = 1024 * 1024;
const NOFOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

interface Frame {
  abs: string;
  rel: string;
  depth: number;
  entries: Dirent[];
  next: number;
  levels: IgnoreLevel[];
}

/**
 * Walk a directory depth-first in name order, yielding each entry before its children.
 * `.git` is never entered, unreadable entries (by the permission rules) are not yielded,
 * symlinks are yielded but not followed, and with `respectGitignore` ignored paths are skipped.
 *
 * Synchronous on purpose, with an explicit stack: a directory read is cheaper than a
 * thread-pool round trip, and nested generators pay at every level for every entry.
 * Callers that run long yield to the event loop themselves (see searchFiles).
 */
export function* walk(sandbox: Sandbox, start: ResolvedPath, options: WalkOptions): Generator<WalkEntry> {
  const levels: IgnoreLevel[] = [];
  if (options.respectGitignore) {
    // .gitignore files of the directories above the start apply too.
    const parts = start.rel === "" ? [] : start.rel.split("/");
    for (let i = 0; i < parts.length; i++) {
      const base = parts.slice(0, i).join("/");
      const level = loadGitignore(sandbox.absOf(base), base);
      if (level !== undefined) levels.push(level);
    }
  }
  const stack: Frame[] = [];
  const first = openFrame(start.abs, start.rel, 1, levels, options);
  if (first !== undefined) stack.push(first);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const d = frame.entries[frame.next++];
    if (d === undefined) {
      stack.pop();
      continue;
    }
    const childRel = frame.rel === "" ? d.name : `${frame.rel}/${d.name}`;
    if (isGitPath(childRel)) continue;
    const type: EntryType = d.isFile()
      ? "file"
      : d.isDirectory()
        ? "directory"
        : d.isSymbolicLink()
          ? "symlink"
          : "other";
    if (frame.levels.length > 0 && isIgnored(frame.levels, childRel, type === "directory")) continue;
    const childAbs = path.join(frame.abs, d.name);
    if (sandbox.permissions.check(childRel, "read").allowed) {
      yield { rel: childRel, abs: childAbs, name: d.name, type, depth: frame.depth };
    }
    // A denied directory may still hold entries a more specific rule allows; they are checked one by one.
    if (type === "directory" && frame.depth < options.maxDepth) {
      const child = openFrame(childAbs, childRel, frame.depth + 1, frame.levels, options);
      if (child !== undefined) stack.push(child);
    }
  }
}

function openFrame(
  abs: string,
  rel: string,
  depth: number,
  levels: IgnoreLevel[],
  options: WalkOptions,
): Frame | undefined {
  options.signal?.throwIfAborted();
  let entries: Dirent[];
  try {
    entries = readdirSync(abs, { withFileTypes: true });
  } catch {
    return undefined; // vanished or unreadable directories are skipped, not fatal to the walk
  }
  let active = levels;
  // Only directories that have one pay for reading a .gitignore.
  if (options.respectGitignore && entries.some((d) => d.name === ".gitignore" && d.isFile())) {
    const level = loadGitignore(abs, rel);
    if (level !== undefined) active = [...levels, level];
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { abs, rel, depth, entries, next: 0, levels: active };
}

function isIgnored(levels: IgnoreLevel[], rel: string, isDir: boolean): boolean {
  for (const { base, ig } of levels) {
    const sub = base === "" ? rel : rel.slice(base.length + 1);
    if (ig.ignores(isDir ? `${sub}/` : sub)) return true;
  }
  return false;
}

function loadGitignore(dirAbs: string, base: string): IgnoreLevel | undefined {
  let text: string;
  let fd: number | undefined;
  try {
    fd = openSync(path.join(dirAbs, ".gitignore"), NOFOLLOW);
    const buf = readFileSync(fd);
    if (buf.length > MAX_GITIGNORE_BYTES) return undefined;
    text = buf.toString("utf8");
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return { base, ig: ignore().add(text) };
}
