import { constants, readlinkSync } from "node:fs";
import { readlink } from "node:fs/promises";
import path from "node:path";
import { WorkspaceError } from "./workspace-error.js";

/** Rule names used in refusals that no configured rule decides. */
export const ROOT_RULE = "root boundary";
export const SYMLINK_RULE = "symlink target outside the root";
export const RACE_RULE = "path changed between check and use";
export const FS_PERMISSION_RULE = "file system permissions";

/** The path an open descriptor refers to, via `/proc/self/fd`; `undefined` where unsupported. */
export async function descriptorPath(fd: number): Promise<string | undefined> {
  if (process.platform !== "linux") return undefined;
  try {
    return await readlink(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/** {@link descriptorPath}, for the synchronous reads of a search. */
export function descriptorPathSync(fd: number): string | undefined {
  if (process.platform !== "linux") return undefined;
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/**
 * Opening a file to read what the walk listed: never through a symlink swapped in since, and
 * never blocking on a FIFO.
 */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** The `code` of a Node system error, if any. */
export function errnoOf(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;
}

/** Whether a relative path stays inside its base (no leading `..`, not absolute). */
export function isInside(rel: string): boolean {
  return rel !== ".." && !rel.startsWith("../") && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

/** The refusal of a non-regular file, naming what it is. */
export function notRegular(
  input: string,
  st:
    | {
        isDirectory(): boolean;
        isFIFO(): boolean;
        isSocket(): boolean;
        isCharacterDevice(): boolean;
        isBlockDevice(): boolean;
      }
    | undefined,
  what?: string,
): WorkspaceError {
  const kind =
    what ??
    (st === undefined
      ? "not a regular file"
      : st.isDirectory()
        ? "a directory"
        : st.isFIFO()
          ? "a FIFO"
          : st.isSocket()
            ? "a socket"
            : st.isCharacterDevice() || st.isBlockDevice()
              ? "a device file"
              : "not a regular file");
  return new WorkspaceError("not-a-file", `Refused '${input}': it is ${kind}, not a regular file`, {
    path: input,
    rule: "regular files only",
  });
}

/** A Node file-system error as a {@link WorkspaceError} about `input`. */
export function fsError(input: string, error: unknown): WorkspaceError {
  const code = errnoOf(error);
  if (code === "ENOENT")
    return new WorkspaceError("not-found", `'${input}' does not exist`, { path: input }, { cause: error });
  if (code === "ENOTDIR") {
    return new WorkspaceError(
      "not-a-directory",
      `'${input}': a parent is not a directory`,
      { path: input },
      { cause: error },
    );
  }
  if (code === "EACCES" || code === "EPERM") {
    // The system message names the absolute path; the caller's path is enough to act on.
    return new WorkspaceError(
      "denied",
      `Access denied to '${input}' by the file system (${code}): give the user the workspace server runs as permission there, or leave the path alone`,
      { path: input, rule: FS_PERMISSION_RULE },
      { cause: error },
    );
  }
  if (code === "ELOOP") {
    return new WorkspaceError(
      "invalid-path",
      `'${input}': too many levels of symlinks`,
      { path: input },
      { cause: error },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  return new WorkspaceError("invalid-path", `'${input}': ${message}`, { path: input }, { cause: error });
}
