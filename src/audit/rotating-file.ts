import { constants } from "node:fs";
import { type FileHandle, lstat, open, readdir, rename, unlink } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { McplexError } from "../errors.js";
import { type AuditBacklog, type AuditSink, DEFAULT_BACKLOG_BYTES, DEFAULT_WAIT_MS } from "./audit-sink.js";
import { BacklogWaiters } from "./backlog-waiters.js";

/** Options of {@link RotatingFile.open}. */
export interface RotatingFileOptions extends AuditBacklog {
  /** A file is rotated before a write would take it past this many bytes. */
  maxSize: number;
  /** Rotated files kept (`audit.log.1` ... `audit.log.<keep>`); 0 keeps none. */
  keep: number;
  /**
   * A rotation that drops a file whose newest line is younger than this (ms) reports
   * `audit-recent-lines-dropped`. Default 24 h.
   */
  keepFor?: number;
}

/** Default of {@link RotatingFileOptions.keepFor}: a day. */
export const DEFAULT_KEEP_FOR_MS = 24 * 3_600_000;

/** Most bytes of lines written at once: whole lines only, so a line is never split. */
const BATCH_BYTES = 64 * 1024;
/** How long a failed write waits before it is tried again (the file reopened). */
const RETRY_MS = 1000;
/** Tries of a failing write while closing, before its lines are given up as lost. */
const CLOSING_TRIES = 3;
/**
 * How long the first line of a batch waits for others before the write. A write goes through
 * the thread pool (about 40 µs of CPU, and a wake-up of a thread and of the event loop): one per
 * line cost a gateway answering one call at a time more than the call itself.
 */
const GATHER_MS = 5;

/**
 * An append-only file of lines with rotation, written off the call path: {@link write} queues a
 * line, and one loop writes queued lines in order (the first of a batch waiting {@link GATHER_MS}
 * for others, except while closing), whole lines per `write` (never a part of one),
 * so lines never interleave or split, also across rotations. Before a write would take the file
 * past `maxSize` it is rotated: `audit.log` becomes `audit.log.1`, `.1` becomes `.2`, ... up to
 * `.<keep>` (the oldest is dropped), and a new `audit.log` is created with mode 0600. A failed
 * write keeps its lines and is tried again every second (the file reopened); until one works,
 * new calls wait for it as they wait for room (`AuditSink.room`).
 *
 * @example
 * const file = await RotatingFile.open("/var/log/mcplex/audit.log", { maxSize: 10 << 20, keep: 5 });
 * file.write(`${JSON.stringify(record)}\n`);
 * await file.close(); // flushes
 */
export class RotatingFile implements AuditSink {
  readonly path: string;
  readonly #maxSize: number;
  readonly #keep: number;
  readonly #keepFor: number;
  readonly #backlogBytes: number;
  readonly #waiters: BacklogWaiters;
  readonly #onEvent: AuditBacklog["onEvent"];
  #handle: FileHandle | undefined;
  /** Bytes in the current file. */
  #size: number;
  /** The highest `<path>.<n>` there is (up to `keep`): a rotation renames those, not `keep` names. */
  #rotated: number;
  /** Lines waiting, oldest first, and their sizes in bytes. */
  #lines: string[] = [];
  #sizes: number[] = [];
  #queuedBytes = 0;
  #flushing: Promise<void> | undefined;
  /** Ends the wait of a batch for more lines (set while it waits). */
  #gathered: (() => void) | undefined;
  /** The error of the write that keeps failing, while it does. */
  #failure: string | undefined;
  #closing = false;
  #closed: Promise<void> | undefined;

  private constructor(
    path: string,
    [handle, size]: [FileHandle, number],
    rotated: number,
    options: RotatingFileOptions,
  ) {
    this.path = path;
    this.#handle = handle;
    this.#size = size;
    this.#rotated = rotated;
    this.#maxSize = options.maxSize;
    this.#keep = options.keep;
    this.#keepFor = options.keepFor ?? DEFAULT_KEEP_FOR_MS;
    this.#backlogBytes = options.backlogBytes ?? DEFAULT_BACKLOG_BYTES;
    this.#onEvent = options.onEvent;
    this.#waiters = new BacklogWaiters(path, options.waitMs ?? DEFAULT_WAIT_MS, options.onEvent);
  }

  /**
   * Opens `path` for appending (created with mode 0600). Throws `AUDIT_OPEN_FAILED` naming the
   * path and the reason when it cannot: a missing directory, no permission, not a regular file.
   */
  static async open(path: string, options: RotatingFileOptions): Promise<RotatingFile> {
    try {
      const opened = await openAppend(path);
      return new RotatingFile(path, opened, await highestRotated(path, options.keep), options);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new McplexError(
        "AUDIT_OPEN_FAILED",
        `cannot open the audit file ${path}: ${reason}`,
        {
          path: "audit.to",
          hint: "create its directory and let mcplex write there, or set audit.to (or --audit) to another file",
        },
        { cause: error },
      );
    }
  }

  write(line: string): void {
    const bytes = Buffer.byteLength(line);
    this.#lines.push(line);
    this.#sizes.push(bytes);
    this.#queuedBytes += bytes;
    this.#flushing ??= this.#gatherThenFlush();
  }

  room(signal: AbortSignal): Promise<void> | undefined {
    // While writes fail, a call waits for one that works: lines that only memory holds are not
    // a trail, and capped lines would let thousands of calls run before the backlog filled.
    if (this.#failure === undefined && this.#queuedBytes <= this.#backlogBytes) return undefined;
    return this.#waiters.wait(signal, () => this.#behind());
  }

  /** Writes what is queued (giving up after a few tries if writing keeps failing), then closes the file. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#closing = true;
      this.#gathered?.();
      while (this.#flushing !== undefined) await this.#flushing;
      await this.#handle?.close().catch(() => {});
      this.#handle = undefined;
    })();
    return this.#closed;
  }

  #behind(): string {
    const waiting = `${this.#queuedBytes} bytes wait to be written`;
    return this.#failure === undefined ? waiting : `${waiting}; the last write failed: ${this.#failure}`;
  }

  /** Lets more lines join the first for {@link GATHER_MS} (not when closing), then writes them. */
  async #gatherThenFlush(): Promise<void> {
    if (!this.#closing)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, GATHER_MS);
        this.#gathered = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    this.#gathered = undefined;
    return this.#flush();
  }

  /** The one writer: batches of whole lines, in order, until nothing is queued. */
  async #flush(): Promise<void> {
    try {
      while (this.#lines.length > 0) {
        // Rotated before the first line that would not fit (a file holds at least one line).
        if (this.#size > 0 && this.#size + this.#sizes[0]! > this.#maxSize) await this.#rotate();
        let count = 0;
        let bytes = 0;
        while (count < this.#lines.length) {
          const next = this.#sizes[count]!;
          if (count > 0 && (bytes + next > BATCH_BYTES || this.#size + bytes + next > this.#maxSize)) break;
          bytes += next;
          count++;
        }
        const batch = Buffer.from(count === 1 ? this.#lines[0]! : this.#lines.slice(0, count).join(""));
        if (!(await this.#writeAll(batch))) {
          this.#lost(this.#lines.length);
          break;
        }
        this.#lines.splice(0, count);
        this.#sizes.splice(0, count);
        this.#queuedBytes -= bytes;
        this.#size += bytes;
        if (this.#queuedBytes <= this.#backlogBytes) this.#waiters.wake();
      }
    } finally {
      this.#flushing = undefined;
    }
  }

  /**
   * Writes `batch` whole, trying again (the file reopened) every second while it fails; `false`
   * when it still fails after a few tries once the file is closing.
   */
  async #writeAll(batch: Buffer): Promise<boolean> {
    let offset = 0;
    let tries = 0;
    for (;;) {
      try {
        if (this.#handle === undefined) [this.#handle, this.#size] = await openAppend(this.path);
        // A short write goes on where it stopped: the rest of the line follows it at once.
        while (offset < batch.length) {
          const { bytesWritten } = await this.#handle.write(batch, offset, batch.length - offset);
          offset += bytesWritten;
        }
        if (this.#failure !== undefined) {
          this.#failure = undefined;
          this.#onEvent?.({ type: "audit-write-resumed", to: this.path });
        }
        return true;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        if (this.#failure === undefined)
          this.#onEvent?.({
            type: "audit-write-failed",
            to: this.path,
            error: reason,
            pendingBytes: this.#queuedBytes,
          });
        this.#failure = reason;
        await this.#handle?.close().catch(() => {});
        this.#handle = undefined;
        if (this.#closing && ++tries >= CLOSING_TRIES) return false;
        await new Promise<void>((resolve) => setTimeout(resolve, RETRY_MS).unref());
      }
    }
  }

  /** `audit.log` → `audit.log.1` → ... → `audit.log.<keep>`, and a new empty `audit.log`. */
  async #rotate(): Promise<void> {
    await this.#handle?.close().catch(() => {});
    this.#handle = undefined;
    // The file this rotation drops: the current one when none are kept, else the oldest kept one.
    if (this.#keep === 0) await this.#warnIfRecent(this.path);
    else if (this.#rotated >= this.#keep) await this.#warnIfRecent(`${this.path}.${this.#keep}`);
    try {
      if (this.#keep === 0) await unlink(this.path);
      else {
        // `.<keep>` is replaced by the rename onto it: the oldest goes.
        for (let n = Math.min(this.#rotated, this.#keep - 1); n >= 1; n--)
          await rename(`${this.path}.${n}`, `${this.path}.${n + 1}`).catch(ignoreMissing);
        await rename(this.path, `${this.path}.1`);
        this.#rotated = Math.min(this.#rotated + 1, this.#keep);
      }
    } catch {
      // Not rotated (the directory refuses a rename): the lines go on in the same file, past
      // maxSize, rather than nowhere. Its size is read again when it is reopened.
    }
    this.#size = 0;
  }

  /** Reports the dropping of `file` when its newest line (its last write) is younger than `keepFor`. */
  async #warnIfRecent(file: string): Promise<void> {
    if (this.#onEvent === undefined) return;
    try {
      const info = await lstat(file);
      const newestAgeMs = Math.max(0, Date.now() - info.mtimeMs);
      if (!info.isFile() || newestAgeMs >= this.#keepFor) return;
      this.#onEvent({
        type: "audit-recent-lines-dropped",
        to: this.path,
        file,
        lines: await countLines(file),
        newestAgeMs: Math.round(newestAgeMs),
        keepForMs: this.#keepFor,
      });
    } catch {
      // Gone or unreadable: nothing to count, and the rotation goes on.
    }
  }

  #lost(count: number): void {
    this.#onEvent?.({ type: "audit-lines-lost", to: this.path, count, error: this.#failure ?? "" });
    this.#lines = [];
    this.#sizes = [];
    this.#queuedBytes = 0;
    this.#waiters.wake();
  }
}

/** Append, create, never through a symbolic link, and never waiting for a FIFO's reader. */
const APPEND_FLAGS =
  constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Opens `path` to append and its size. Refuses a symbolic link at the path (the link itself, not
 * where it points, is what someone else may have put there), what is not a regular file, and a
 * file with other hard links; an existing file's mode becomes 0600 as a new one's is.
 */
async function openAppend(path: string): Promise<[FileHandle, number]> {
  let handle: FileHandle;
  try {
    handle = await open(path, APPEND_FLAGS, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP")
      throw new Error("it is a symbolic link, which the audit trail never follows (name the file itself)", {
        cause: error,
      });
    // A directory; a FIFO or socket without a reader.
    if (code === "EISDIR" || code === "ENXIO") throw new Error("it is not a regular file", { cause: error });
    throw error;
  }
  try {
    // Checked on what was opened, not on the path: nothing can swap the file in between.
    const info = await handle.stat();
    if (!info.isFile()) throw new Error("it is not a regular file");
    if (info.nlink > 1)
      throw new Error(`it has ${info.nlink - 1} other hard link(s), which could expose or alter it`);
    if ((info.mode & 0o777) !== 0o600) await handle.chmod(0o600);
    return [handle, info.size];
  } catch (error) {
    await handle.close().catch(() => {});
    throw error;
  }
}

/** The lines of `file` (never through a symbolic link), read a chunk at a time. */
async function countLines(file: string): Promise<number> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const chunk = Buffer.alloc(BATCH_BYTES * 16);
    let lines = 0;
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) return lines;
      const read = chunk.subarray(0, bytesRead);
      for (let at = read.indexOf(10); at !== -1; at = read.indexOf(10, at + 1)) lines++;
    }
  } finally {
    await handle.close();
  }
}

/** The highest `n` (at most `keep`) of the `<path>.<n>` files there are now. */
async function highestRotated(path: string, keep: number): Promise<number> {
  const prefix = `${basename(path)}.`;
  let highest = 0;
  for (const name of await readdir(dirname(path)).catch(() => [] as string[])) {
    if (!name.startsWith(prefix)) continue;
    const n = Number(name.slice(prefix.length));
    if (Number.isSafeInteger(n) && n > highest) highest = n;
  }
  return Math.min(highest, keep);
}

function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
}
