import { readFile } from "node:fs/promises";
import { basename, dirname, extname, join } from "node:path";
import { McplexError } from "../errors.js";
import { withFileLock } from "../storage/file-lock.js";
import { writeFileAtomic } from "../storage/write-file-atomic.js";
import { canonicalJson, type PinnedTool } from "./tool-fingerprint.js";

/** One pinned tool in the lock file: its fingerprint and the fields it was taken over (for diffs). */
export interface LockedTool {
  fingerprint: string;
  tool: PinnedTool;
  /**
   * `1`: pinned by lock format 1, over its fields only (`FORMAT_1_FIELDS`): the app URI, icons
   * and task support were never approved. Such a pin is renewed or held at the tool's first
   * list (see `ToolPins.check` and docs/pinning.md, "Format 1"). Absent: over every pinned field.
   */
  format?: 1;
}

/** The lock format this version writes. */
export const LOCKFILE_VERSION = 2;

/** The lock file: format version, and per server the tools approved, by their original name. */
export interface PinLock {
  lockfileVersion: typeof LOCKFILE_VERSION;
  servers: Record<string, { tools: Record<string, LockedTool> }>;
}

/** A lock file that is not one: a read error names the file and how to start again. */
export class PinLockError extends McplexError {}

/**
 * Where a config's lock file goes: beside it, named after it (`mcplex.yaml` →
 * `mcplex.lock.json`, `.cursor/mcp.json` → `.cursor/mcp.lock.json`).
 */
export function lockFilePath(configPath: string): string {
  const name = basename(configPath, extname(configPath));
  return join(dirname(configPath), `${name}.lock.json`);
}

/** An empty lock. */
export function emptyLock(): PinLock {
  return { lockfileVersion: LOCKFILE_VERSION, servers: {} };
}

/**
 * Reads a lock file; a missing one is empty. A format-1 file (`"lockfileVersion": 1`) is read as
 * format 2 with each of its pins marked `format: 1`; it is written as format 2 at the next change.
 */
export async function readPinLock(path: string): Promise<PinLock> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return emptyLock();
    throw new PinLockError(
      "PIN_LOCK_INVALID",
      `cannot read the tool lock file ${path}`,
      {
        path,
        hint: "check its permissions",
      },
      { cause: error },
    );
  }
  const invalid = (why: string) =>
    new PinLockError("PIN_LOCK_INVALID", `the tool lock file ${path} ${why}`, {
      path,
      hint: "restore it from version control, or delete it to pin every server's tools as they are now",
    });
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw invalid("is not JSON");
  }
  const lock = data as { lockfileVersion?: unknown; servers?: PinLock["servers"] };
  const version = typeof lock === "object" && lock !== null ? lock.lockfileVersion : undefined;
  if (version !== 1 && version !== LOCKFILE_VERSION)
    throw invalid(
      `has "lockfileVersion": ${JSON.stringify(version) ?? "none"}, not 1 or ${LOCKFILE_VERSION} (written by a newer version of mcplex?)`,
    );
  if (typeof lock.servers !== "object" || lock.servers === null) throw invalid('has no "servers" map');
  for (const [server, entry] of Object.entries(lock.servers)) {
    if (typeof entry?.tools !== "object" || entry.tools === null)
      throw invalid(`has no "tools" map for "${server}"`);
    for (const [name, locked] of Object.entries(entry.tools)) {
      if (typeof locked?.fingerprint !== "string" || typeof locked.tool !== "object" || locked.tool === null)
        throw invalid(`has no fingerprint and tool for "${server}" tool "${name}"`);
      if (locked.format !== undefined && locked.format !== 1)
        throw invalid(
          `has "format": ${JSON.stringify(locked.format)} for "${server}" tool "${name}" (only 1 is known)`,
        );
      // What format 1 pinned covers its fields only: marked so, whatever the file says.
      if (version === 1) locked.format = 1;
    }
  }
  return { lockfileVersion: LOCKFILE_VERSION, servers: lock.servers };
}

/** The text of a lock: canonical (sorted keys) and indented, so that it diffs well under version control. */
export function pinLockText(lock: PinLock): string {
  return `${JSON.stringify(JSON.parse(canonicalJson(lock)), null, 2)}\n`;
}

/**
 * Changes the lock file as one step between processes: under a lock file (`PATH.lock`), reads
 * it as it is now, lets `change` edit it, and writes it atomically (a reader sees the old file
 * or the new one). Two `serve`s pinning different servers, or a `serve` and `mcplex trust`,
 * each keep what the other wrote. Returns the lock as written.
 */
export async function updatePinLock(path: string, change: (lock: PinLock) => void): Promise<PinLock> {
  return withFileLock(`${path}.lock`, async () => {
    const lock = await readPinLock(path);
    change(lock);
    await writeFileAtomic(path, pinLockText(lock), { mode: 0o644 });
    return lock;
  });
}
