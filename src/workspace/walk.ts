import { constants, type Dirent } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
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

/**
 * Walk a directory depth-first in name order, yielding each entry before its children.
 * `.git` is never entered, unreadable entries (by the permission rules) are not yielded,
 * symlinks are yielded but not followed, and with `respectGitignore` ignored paths are skipped.
 */
export async function* walk(
  sandbox: Sandbox,
  start: ResolvedPath,
  options: WalkOptions,
): AsyncGenerator<WalkEntry> {
  const levels: IgnoreLevel[] = [];
  if (options.respectGitignore) {
    // .gitignore files of the directories above the start apply too.
    const parts = start.rel === "" ? [] : start.rel.split("/");
    for (let i = 0; i < parts.length; i++) {
      const base = parts.slice(0, i).join("/");
      const level = await loadGitignore(sandbox.absOf(base), base);
      if (level !== undefined) levels.push(level);
    }
  }
  yield* walkDir(sandbox, start.abs, start.rel, 1, levels, options);
}

async function* walkDir(
  sandbox: Sandbox,
  abs: string,
  rel: string,
  depth: number,
  levels: IgnoreLevel[],
  options: WalkOptions,
): AsyncGenerator<WalkEntry> {
  options.signal?.throwIfAborted();
  let dirents: Dirent[];
  try {
    dirents = await readdir(abs, { withFileTypes: true });
  } catch {
    return; // vanished or unreadable directories are skipped, not fatal to the walk
  }
  let active = levels;
  if (options.respectGitignore) {
    const level = await loadGitignore(abs, rel);
    if (level !== undefined) active = [...levels, level];
  }
  dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const d of dirents) {
    const childRel = rel === "" ? d.name : `${rel}/${d.name}`;
    if (isGitPath(childRel)) continue;
    const type: EntryType = d.isFile()
      ? "file"
      : d.isDirectory()
        ? "directory"
        : d.isSymbolicLink()
          ? "symlink"
          : "other";
    if (active.length > 0 && isIgnored(active, childRel, type === "directory")) continue;
    const childAbs = path.join(abs, d.name);
    if (sandbox.permissions.check(childRel, "read").allowed) {
      yield { rel: childRel, abs: childAbs, name: d.name, type, depth };
    }
    // A denied directory may still hold entries a more specific rule allows; they are checked one by one.
    if (type === "directory" && depth < options.maxDepth) {
      yield* walkDir(sandbox, childAbs, childRel, depth + 1, active, options);
    }
  }
}

function isIgnored(levels: IgnoreLevel[], rel: string, isDir: boolean): boolean {
  for (const { base, ig } of levels) {
    const sub = base === "" ? rel : rel.slice(base.length + 1);
    if (ig.ignores(isDir ? `${sub}/` : sub)) return true;
  }
  return false;
}

async function loadGitignore(dirAbs: string, base: string): Promise<IgnoreLevel | undefined> {
  let text: string;
  try {
    const buf = await readFile(path.join(dirAbs, ".gitignore"), { flag: NOFOLLOW });
    if (buf.length > MAX_GITIGNORE_BYTES) return undefined;
    text = buf.toString("utf8");
  } catch {
    return undefined;
  }
  return { base, ig: ignore().add(text) };
}
