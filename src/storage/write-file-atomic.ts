import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** Options of {@link writeFileAtomic}. */
export interface WriteFileAtomicOptions {
  /** Permission bits of the file written (before the umask): `0o600` for secrets. */
  mode: number;
  /**
   * `fsync` the file before the rename and its directory after, so that once the promise
   * resolves a crash leaves the new content, not an empty or missing file. Default `true`;
   * a cache that can be rebuilt may pass `false`.
   */
  durable?: boolean;
  /**
   * Runs after the temp file is written and before it replaces `file`; a throw leaves `file`
   * as it was (the workspace checks there that its pinned directory has not moved).
   */
  beforeRename?: () => Promise<void>;
  /** Checked before the temp file is made and before the rename: an abort leaves `file` as it was. */
  signal?: AbortSignal;
}

// O_EXCL: a file or a symlink already at the temp name is an error, never opened or followed
// (O_NOFOLLOW spells that out).
const TEMP_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Replaces `file` with `data` all at once: the data goes to a new temp file beside it (same
 * directory, so the same file system) and is renamed over it, so a reader sees the old content
 * or the new one, never a part, and a crash or a failed write leaves the old file. The temp file
 * is removed on any failure. The parent directory must exist. Errors are Node's, thrown as they
 * are: callers name their file and problem (the secret store wraps them in its own error).
 *
 * @example
 * await writeFileAtomic(storePath, `${JSON.stringify(envelope)}\n`, { mode: 0o600 });
 */
export async function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  options: WriteFileAtomicOptions,
): Promise<void> {
  const { signal, durable = true } = options;
  signal?.throwIfAborted();
  const dir = dirname(file);
  // Hidden, and naming its owner: in a workspace a temp file sits in a user's tree.
  const temp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(6).toString("hex")}.mcplex-tmp`);
  let renamed = false;
  try {
    const handle = await open(temp, TEMP_FLAGS, options.mode);
    try {
      await handle.writeFile(data);
      if (durable) await handle.sync();
    } finally {
      await handle.close();
    }
    await options.beforeRename?.();
    signal?.throwIfAborted();
    await rename(temp, file);
    renamed = true;
  } finally {
    if (!renamed) await unlink(temp).catch(() => undefined);
  }
  if (durable) await syncDirectory(dir);
}

/**
 * Makes a rename in `dir` durable. Best effort: some file systems refuse `fsync` on a directory
 * (EINVAL), and the rename has already happened, so that is no failure of the write.
 */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY).catch(() => undefined);
  if (handle === undefined) return;
  try {
    await handle.sync();
  } catch {
    // See above.
  } finally {
    await handle.close();
  }
}
