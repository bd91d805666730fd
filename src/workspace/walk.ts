import { closeSync, constants, type Dirent, openSync, readFileSync } from "node:fs";
import path from "node:path";
import ignore, { type Ignore } from "ignore";
import { fsError, RACE_RULE } from "./fs-checks.js";
import { isGitPath } from "./permissions.js";
import { PinnedDirectory } from "./pinned-directory.js";
import type { ResolvedPath, RootWall } from "./root-wall.js";
import { WorkspaceError } from "./workspace-error.js";

/** The kind of a directory entry; symlinks are reported, never followed. */
export type EntryType = "file" | "directory" | "symlink" | "other";

/** One entry met by {@link walk}. */
export interface WalkEntry {
  /** Root-relative POSIX path. */
  rel: string;
  abs: string;
  /**
   * The entry reached through its directory's descriptor: `lstat` it, or `open` it with
   * `O_NOFOLLOW`, to get the entry the walk listed even if a directory on its path has been
   * swapped for a symlink since. Valid only until the walk is resumed.
   */
  at: string;
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
  dir: PinnedDirectory;
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
 * Each directory is opened through its parent's descriptor and checked to be where the walk
 * expects it (see {@link PinnedDirectory}): a directory swapped for a symlink to outside the
 * root between the parent's listing and its own is skipped, never listed.
 *
 * Synchronous on purpose, with an explicit stack: a directory read is cheaper than a
 * thread-pool round trip, and nested generators pay at every level for every entry.
 * Callers that run long yield to the event loop themselves (see searchFiles).
 */
export function* walk(wall: RootWall, start: ResolvedPath, options: WalkOptions): Generator<WalkEntry> {
  const levels: IgnoreLevel[] = [];
  if (options.respectGitignore) {
    // .gitignore files of the directories above the start apply too.
    const parts = start.rel === "" ? [] : start.rel.split("/");
    for (let i = 0; i < parts.length; i++) {
      const base = parts.slice(0, i).join("/");
      // Found by path: a swap here changes only which entries are left out, never what is read.
      const level = loadGitignore(path.join(wall.absOf(base), ".gitignore"), base);
      if (level !== undefined) levels.push(level);
    }
  }
  const stack: Frame[] = [];
  try {
    const first = openFrame(openStart(start), start.rel, 1, levels, options);
    if (first !== undefined) stack.push(first);
    yield* walkFrames(wall, stack, options);
  } finally {
    // Also when the caller stops early: every directory still open is closed.
    for (const frame of stack) frame.dir.close();
  }
}

function* walkFrames(wall: RootWall, stack: Frame[], options: WalkOptions): Generator<WalkEntry> {
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const d = frame.entries[frame.next++];
    if (d === undefined) {
      stack.pop()!.dir.close();
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
    if (wall.permissions.check(childRel, "read").allowed) {
      const abs = path.join(frame.dir.abs, d.name);
      yield { rel: childRel, abs, at: frame.dir.at(d.name), name: d.name, type, depth: frame.depth };
    }
    // A denied directory may still hold entries a more specific rule allows; they are checked one by one.
    if (type === "directory" && frame.depth < options.maxDepth) {
      const child = openFrame(frame.dir.child(d.name), childRel, frame.depth + 1, frame.levels, options);
      if (child !== undefined) stack.push(child);
    }
  }
}

/** The start directory, checked by the caller: gone or replaced since is a lost race, not an empty listing. */
function openStart(start: ResolvedPath): PinnedDirectory {
  const shown = start.rel === "" ? "." : start.rel;
  let dir: PinnedDirectory | undefined;
  try {
    dir = PinnedDirectory.open(start.abs);
  } catch (error) {
    throw fsError(shown, error);
  }
  if (dir === undefined) {
    throw new WorkspaceError("race", `Refused '${shown}': it was replaced or moved after it was checked`, {
      path: shown,
      rule: RACE_RULE,
    });
  }
  return dir;
}

/** A frame for an opened directory (closed again when it cannot be read); `undefined` skips it. */
function openFrame(
  dir: PinnedDirectory | undefined,
  rel: string,
  depth: number,
  levels: IgnoreLevel[],
  options: WalkOptions,
): Frame | undefined {
  if (dir === undefined) return undefined; // vanished, unreadable or swapped: skipped, not fatal to the walk
  let entries: Dirent[] | undefined;
  try {
    options.signal?.throwIfAborted();
    entries = dir.entries();
  } finally {
    if (entries === undefined) dir.close();
  }
  if (entries === undefined) return undefined;
  let active = levels;
  // Only directories that have one pay for reading a .gitignore.
  if (options.respectGitignore && entries.some((d) => d.name === ".gitignore" && d.isFile())) {
    const level = loadGitignore(dir.at(".gitignore"), rel);
    if (level !== undefined) active = [...levels, level];
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { dir, rel, depth, entries, next: 0, levels: active };
}

function isIgnored(levels: IgnoreLevel[], rel: string, isDir: boolean): boolean {
  for (const { base, ig } of levels) {
    const sub = base === "" ? rel : rel.slice(base.length + 1);
    if (ig.ignores(isDir ? `${sub}/` : sub)) return true;
  }
  return false;
}

function loadGitignore(file: string, base: string): IgnoreLevel | undefined {
  let text: string;
  let fd: number | undefined;
  try {
    fd = openSync(file, NOFOLLOW);
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
