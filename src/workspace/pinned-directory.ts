import {
  closeSync,
  constants,
  type Dirent,
  existsSync,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  realpathSync,
} from "node:fs";
import path from "node:path";
import { errnoOf } from "./fs-checks.js";

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const MOVED = new Set(["ENOENT", "ENOTDIR", "ELOOP"]);
/** Linux names every open descriptor under /proc/self/fd: the only openat() Node offers. */
const BY_DESCRIPTOR = process.platform === "linux" && existsSync("/proc/self/fd");

/**
 * A directory held open by descriptor once it was checked to be where it should be, so that
 * its entries and subdirectories are reached through the directory itself, not through a
 * path that a neighbour can swap for a symlink meanwhile.
 *
 * Why this is race-free on Linux: `/proc/self/fd/N` is a magic link to the very directory
 * open as N (the kernel does not re-resolve its path), so `/proc/self/fd/N/name` is exactly
 * openat(N, "name"), and with `O_NOFOLLOW` the last component cannot be a symlink either.
 * Each directory is opened through its parent's descriptor this way, and its identity is
 * checked once more afterwards: the kernel's own name for the descriptor must be the real
 * path the walk expects, which lies inside the root. The one window left is a directory moved
 * out of the root after that check while it is being read: what is listed is then the contents
 * of a directory that was inside the workspace, never a directory that was outside all along.
 *
 * Elsewhere (no /proc), paths are used, with the identity (device and inode of the descriptor
 * against the path, and the path's realpath) checked after opening and again after reading, so
 * only a swap that is made and undone between the two checks goes unseen.
 *
 * @example
 * const dir = PinnedDirectory.open(wall.root);
 * if (dir !== undefined) try { for (const d of dir.entries() ?? []) lstatSync(dir.at(d.name)) } finally { dir.close() }
 */
export class PinnedDirectory {
  private closed = false;

  private constructor(
    readonly fd: number,
    /** The real absolute path the directory was checked to have. */
    readonly abs: string,
  ) {}

  /**
   * Open the directory whose real path is `abs` (its last component must not be a symlink) and
   * check that the opened directory is the one at `abs`; `undefined` when it is not, or is gone.
   * Throws the system error when it is there but cannot be opened (permissions, descriptors).
   */
  static open(abs: string): PinnedDirectory | undefined {
    return PinnedDirectory.openAt(abs, abs);
  }

  /** Open the subdirectory `name` through this directory; `undefined` if it is not one (any more) or cannot be opened. */
  child(name: string): PinnedDirectory | undefined {
    try {
      return PinnedDirectory.openAt(this.at(name), path.join(this.abs, name));
    } catch {
      return undefined;
    }
  }

  /**
   * A path to `name` in this very directory, valid while it is open: use it with `lstat`, or
   * `open` with `O_NOFOLLOW`, so that a symlink put in its place is not followed either.
   */
  at(name: string): string {
    return BY_DESCRIPTOR ? `/proc/self/fd/${this.fd}/${name}` : path.join(this.abs, name);
  }

  /** The entries of this directory, or `undefined` when it cannot be read or moved while read. */
  entries(): Dirent[] | undefined {
    try {
      const entries = readdirSync(BY_DESCRIPTOR ? `/proc/self/fd/${this.fd}` : this.abs, {
        withFileTypes: true,
      });
      return BY_DESCRIPTOR || isAt(this.fd, this.abs) ? entries : undefined;
    } catch {
      return undefined;
    }
  }

  /** Close the descriptor; safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }

  private static openAt(openPath: string, abs: string): PinnedDirectory | undefined {
    let fd: number;
    try {
      fd = openSync(openPath, DIR_FLAGS);
    } catch (error) {
      // Gone, not a directory, or a symlink (ELOOP/ENOTDIR from O_NOFOLLOW): not what was checked.
      if (MOVED.has(errnoOf(error) ?? "")) return undefined;
      throw error;
    }
    if (isAt(fd, abs)) return new PinnedDirectory(fd, abs);
    closeSync(fd);
    return undefined;
  }
}

/** Whether the open directory `fd` is the one at the real path `abs`. */
function isAt(fd: number, abs: string): boolean {
  try {
    if (BY_DESCRIPTOR) return readlinkSync(`/proc/self/fd/${fd}`) === abs;
    const held = fstatSync(fd);
    const there = lstatSync(abs);
    return held.dev === there.dev && held.ino === there.ino && realpathSync(abs) === abs;
  } catch {
    return false;
  }
}
