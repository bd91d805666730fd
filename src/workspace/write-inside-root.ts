import { constants, mkdirSync } from "node:fs";
import { lstat, open, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { writeFileAtomic } from "../storage/write-file-atomic.js";
import { descriptorPath, errnoOf, fsError, notRegular, RACE_RULE, SYMLINK_RULE } from "./fs-checks.js";
import { PinnedDirectory } from "./pinned-directory.js";
import type { ResolvedPath, RootWall } from "./root-wall.js";
import { WorkspaceError } from "./workspace-error.js";

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** Options of {@link writeInsideRoot}. */
export interface WriteOptions {
  /** Create missing parent directories (inside the root) instead of failing. */
  createParents?: boolean;
}

function moved(input: string): WorkspaceError {
  return new WorkspaceError("race", `Refused '${input}': its directory moved during the write`, {
    path: input,
    rule: RACE_RULE,
  });
}

/**
 * Write `data` to `input` atomically, inside the root: checks, then {@link writeFileAtomic}'s
 * temp file and rename beside the real target, done through a descriptor of the checked parent
 * directory (on Linux), so that no swap of a path component can redirect it, and refused if
 * that directory moved before the rename. Nothing is left behind on failure. The core is the
 * config's writer; what is the workspace's own is where it writes (the pinned directory), the
 * check before publishing, the replaced file's mode, and errors as {@link WorkspaceError}s.
 */
export async function writeInsideRoot(
  wall: RootWall,
  input: string,
  data: string | Uint8Array,
  options: WriteOptions = {},
): Promise<ResolvedPath & { bytes: number; created: boolean }> {
  const lexical = wall.resolve(input, "write");
  if (lexical.rel === "") throw notRegular(input, undefined, "the workspace root");
  const { target, parent, ancestor, missingParents, existing } = await writeTarget(wall, input, lexical);
  if (missingParents && !options.createParents) {
    throw new WorkspaceError(
      "not-found",
      `Parent directory of '${input}' does not exist (pass createParents: true to create it)`,
      { path: input },
    );
  }
  if (missingParents) makeParents(wall, input, ancestor, parent);
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  // Pin the parent directory by descriptor and work inside it through /proc/self/fd (an
  // openat() in all but name): a path component swapped for a symlink after the checks
  // above cannot redirect the temp file or the rename.
  const dir = await open(parent, DIR_FLAGS).catch((error: unknown) => {
    throw fsError(input, error);
  });
  try {
    const pinned = await descriptorPath(dir.fd);
    if (pinned !== undefined && pinned !== parent) throw moved(input);
    const base = pinned === undefined ? parent : `/proc/self/fd/${dir.fd}`;
    await writeFileAtomic(path.join(base, path.basename(target)), bytes, {
      mode: existing?.mode ?? 0o666,
      // The directory itself may have been moved out meanwhile: check once more before publishing.
      beforeRename: async () => {
        const still = await descriptorPath(dir.fd);
        if (still !== undefined && still !== parent) throw moved(input);
      },
    }).catch((error: unknown) => {
      throw error instanceof WorkspaceError ? error : fsError(input, error);
    });
  } finally {
    await dir.close();
  }
  const rel = wall.relOf(target) ?? lexical.rel;
  return { rel, abs: target, bytes: bytes.byteLength, created: existing === undefined };
}

/**
 * Create the missing directories from `ancestor` (a checked real directory inside the root) down
 * to `parent`, one level at a time, each made and then opened through the descriptor of the one
 * above (see {@link PinnedDirectory}). `mkdir` never follows a symlink at the name it creates,
 * and the open refuses one there, so a symlink that appears at a missing component meanwhile
 * stops the write (a race) instead of leading a `mkdir` outside the root.
 */
function makeParents(wall: RootWall, input: string, ancestor: string, parent: string): void {
  let dir: PinnedDirectory | undefined;
  try {
    dir = PinnedDirectory.open(ancestor);
  } catch (error) {
    throw fsError(input, error);
  }
  if (dir === undefined) throw moved(input);
  try {
    for (const name of path.relative(ancestor, parent).split(path.sep)) {
      try {
        mkdirSync(dir.at(name));
      } catch (error) {
        // Made meanwhile by someone else: fine if it is a real directory, which the open checks.
        if (errnoOf(error) !== "EEXIST") throw fsError(input, error);
      }
      const next = dir.child(name);
      if (next === undefined) {
        const shown = wall.relOf(path.join(dir.abs, name)) ?? name;
        throw new WorkspaceError(
          "race",
          `Refused '${input}': '${shown}' was replaced by something other than a directory while the parent directories were being created; nothing was written`,
          { path: input, rule: RACE_RULE },
        );
      }
      dir.close();
      dir = next;
    }
  } finally {
    dir.close();
  }
}

async function writeTarget(
  wall: RootWall,
  input: string,
  lexical: ResolvedPath,
): Promise<{
  target: string;
  parent: string;
  /** The nearest existing (real) directory above the target. */
  ancestor: string;
  missingParents: boolean;
  existing?: { mode: number };
}> {
  let st: Awaited<ReturnType<typeof lstat>> | undefined;
  try {
    st = await lstat(lexical.abs);
  } catch (error) {
    const code = errnoOf(error);
    if (code === "ENOTDIR") {
      throw new WorkspaceError("not-a-directory", `Cannot write '${input}': a parent is not a directory`, {
        path: input,
      });
    }
    if (code !== "ENOENT") throw fsError(input, error);
  }
  if (st !== undefined) {
    // realpath resolves every component, the last one included: the write lands where the path really is.
    const real = await realpath(lexical.abs).catch(() => undefined);
    if (real === undefined) {
      throw new WorkspaceError("not-found", `Cannot write '${input}': it is a dangling symlink`, {
        path: input,
      });
    }
    const checked = wall.checkReal(input, real, "write");
    const target = await stat(checked.abs);
    if (!target.isFile()) throw notRegular(input, target);
    const parent = path.dirname(checked.abs);
    return {
      target: checked.abs,
      parent,
      ancestor: parent,
      missingParents: false,
      existing: { mode: target.mode & 0o7777 },
    };
  }
  // New file: resolve the nearest existing ancestor, which must be a directory inside the root.
  const missing: string[] = [path.basename(lexical.abs)];
  let ancestor = path.dirname(lexical.abs);
  let realAncestor: string | undefined;
  while (realAncestor === undefined) {
    try {
      realAncestor = await realpath(ancestor);
    } catch (error) {
      if (errnoOf(error) !== "ENOENT" || ancestor === wall.root) throw fsError(input, error);
      missing.unshift(path.basename(ancestor));
      ancestor = path.dirname(ancestor);
    }
  }
  const ancestorRel = wall.relOf(realAncestor);
  if (ancestorRel === undefined) {
    throw new WorkspaceError(
      "outside-root",
      `Refused '${input}': its directory resolves to ${realAncestor}, outside the workspace root ${wall.root}`,
      { path: input, rule: SYMLINK_RULE },
    );
  }
  const ancestorStat = await stat(realAncestor).catch((error: unknown) => {
    throw fsError(input, error);
  });
  if (!ancestorStat.isDirectory()) {
    throw new WorkspaceError("not-a-directory", `Cannot write '${input}': a parent is not a directory`, {
      path: input,
    });
  }
  const target = path.join(realAncestor, ...missing);
  wall.checkReal(input, target, "write");
  return { target, parent: path.dirname(target), ancestor: realAncestor, missingParents: missing.length > 1 };
}
