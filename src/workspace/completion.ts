import type { Dirent } from "node:fs";
import { isGitPath } from "./permissions.js";
import { PinnedDirectory } from "./pinned-directory.js";
import type { RootWall } from "./root-wall.js";

/** Most suggestions returned by {@link completePaths}. */
export const MAX_COMPLETIONS = 100;

/**
 * Complete a partial root-relative path: the readable entries of its directory whose names
 * start with its last segment, directories with a trailing `/`. Never throws; a prefix that
 * leads nowhere (or outside the root) completes to nothing.
 *
 * @example
 * await completePaths(wall, "src/wo") // ["src/workspace/"]
 */
export async function completePaths(
  wall: RootWall,
  prefix: string,
  options: { directoriesOnly?: boolean } = {},
): Promise<string[]> {
  const slash = prefix.lastIndexOf("/");
  const dirPart = slash === -1 ? "" : prefix.slice(0, slash);
  const namePart = slash === -1 ? prefix : prefix.slice(slash + 1);
  try {
    const dir = await wall.openDirectory(dirPart === "" ? "." : dirPart);
    // Read through a checked descriptor: a directory swapped for a symlink meanwhile completes to nothing.
    const pinned = PinnedDirectory.open(dir.abs);
    let dirents: Dirent[] | undefined;
    try {
      dirents = pinned?.entries();
    } finally {
      pinned?.close();
    }
    if (dirents === undefined) return [];
    const shownDir = dirPart === "" ? "" : `${dirPart}/`;
    const out: string[] = [];
    for (const d of dirents.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (!d.name.startsWith(namePart)) continue;
      if (namePart === "" && d.name.startsWith(".")) continue; // dotfiles only when asked for
      const rel = dir.rel === "" ? d.name : `${dir.rel}/${d.name}`;
      if (isGitPath(rel) || !wall.permissions.check(rel, "read").allowed) continue;
      const isDir = d.isDirectory();
      if (options.directoriesOnly && !isDir) continue;
      out.push(`${shownDir}${d.name}${isDir ? "/" : ""}`);
      if (out.length >= MAX_COMPLETIONS) break;
    }
    return out;
  } catch {
    return [];
  }
}
