import { mkdir, open, stat, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { McplexError } from "../errors.js";

export interface FileLockOptions {
  /** How long to wait for another holder before giving up. Default 10 s. */
  waitMs?: number;
  /** A lock file older than this was left by a process that died, and is broken. Default 30 s. */
  staleMs?: number;
}

/**
 * Runs `operation` while holding `path` as a lock between processes: the file is created
 * exclusively and removed afterwards. For read-modify-write of a shared file (the secret
 * store: a `serve` refreshing OAuth tokens while `mcplex secrets set` runs; the pin lock file;
 * a config `mcplex add` edits).
 *
 * Holders in this process take their turns in order before the file is tried: the file then
 * serialises processes only (holders of one process polling it waited on its backoff, and ten
 * writers at once outlasted its 10 s wait). Not reentrant: an operation must not take the
 * lock it holds.
 *
 * @throws McplexError (`FILE_LOCKED`) when another process holds it past `waitMs`.
 */
export function withFileLock<T>(
  path: string,
  operation: () => Promise<T>,
  options: FileLockOptions = {},
): Promise<T> {
  const run = (turns.get(path) ?? Promise.resolve()).then(
    () => holdFile(path, operation, options),
    () => holdFile(path, operation, options),
  );
  const settled = run.catch(() => undefined);
  turns.set(path, settled);
  // The last in line clears the entry, so locks no longer used hold no memory.
  void settled.then(() => {
    if (turns.get(path) === settled) turns.delete(path);
  });
  return run;
}

/** Each lock's holders in this process, one after another. */
const turns = new Map<string, Promise<unknown>>();

async function holdFile<T>(path: string, operation: () => Promise<T>, options: FileLockOptions): Promise<T> {
  const { waitMs = 10_000, staleMs = 30_000 } = options;
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const deadline = Date.now() + waitMs;
  for (let delay = 2; ; delay = Math.min(delay * 2, 100)) {
    try {
      const handle = await open(path, "wx", 0o600);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const since = await stat(path).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (since > staleMs) {
        await unlink(path).catch(() => undefined);
        continue;
      }
      if (Date.now() > deadline) {
        throw new McplexError("FILE_LOCKED", `${path} is held by another mcplex process`, {
          path,
          hint: `if no other mcplex is running, delete ${path}`,
          retryable: true,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
  try {
    return await operation();
  } finally {
    await unlink(path).catch(() => undefined);
  }
}
