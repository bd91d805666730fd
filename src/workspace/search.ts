import { closeSync, fstatSync, lstatSync, openSync } from "node:fs";
import picomatch from "picomatch";
import { descriptorPathSync, READ_FLAGS } from "./fs-checks.js";
import { type FileMatches, RegexGuard, RegexTimeoutError } from "./regex-guard.js";
import type { RootWall } from "./root-wall.js";
import { MAX_LINE_TEXT, type Matcher, matchLines, type SearchMatch, scanFile, WINDOW } from "./scan-file.js";
import { walk } from "./walk.js";
import { WorkspaceError } from "./workspace-error.js";

/** Options of {@link searchFiles}. */
export interface SearchOptions {
  /** Directory to search, relative to the root. Default `"."`. */
  path?: string;
  /** Glob on paths relative to `path`; without a `/` it matches base names. Default `**`. */
  pattern?: string;
  /** Text (or, with `regex`, a JavaScript regular expression) to find in file contents. */
  query?: string;
  regex?: boolean;
  caseSensitive?: boolean;
  /** Most matches (or files, without `query`) returned. */
  maxResults: number;
  /** Most content bytes read over the whole search. */
  maxBytes: number;
  /** Also search paths that `.gitignore` ignores. */
  includeIgnored?: boolean;
  /** Longest a `regex` query may run on one file before the search fails. Default 5 s. */
  regexTimeoutMs?: number;
  signal?: AbortSignal;
}

/** What {@link searchFiles} found and how much it looked at. */
export interface SearchResult {
  /** Files whose path matched (and, with a query, whose contents matched). */
  files: Array<{ path: string; size: number }>;
  matches: SearchMatch[];
  filesScanned: number;
  bytesScanned: number;
  binarySkipped: number;
  truncated: boolean;
  truncatedBy?: "maxResults" | "maxBytes";
}

const YIELD_EVERY_MS = 10;
const REGEX_TIMEOUT_MS = 5000;
/** Regex batches sent to the worker and not yet recorded, before the search waits. */
const BATCHES_AHEAD = 2;

/**
 * Find files by glob and, optionally, lines by text or regex. Each file is read in windows
 * into one reused buffer with synchronous calls (a thread-pool round trip per file costs more
 * than the read itself), yielding to the event loop every few milliseconds so cancellation
 * and other requests go on. Binary files (a NUL in the first bytes) are skipped, `.gitignore`d
 * paths too unless `includeIgnored`; the search stops at `maxResults` or once `maxBytes` have
 * been read. Results come in path order.
 */
export async function searchFiles(wall: RootWall, options: SearchOptions): Promise<SearchResult> {
  const matcher = options.query === undefined ? undefined : compileQuery(options.query, options);
  // Cancelling stops a regex the worker is stuck on at once, not at the time limit.
  const guard = matcher?.guard;
  const stopWorker = () => guard?.close();
  if (guard !== undefined) options.signal?.addEventListener("abort", stopWorker, { once: true });
  try {
    return await search(wall, options, matcher);
  } finally {
    options.signal?.removeEventListener("abort", stopWorker);
    guard?.close();
  }
}

async function search(
  wall: RootWall,
  options: SearchOptions,
  matcher: Matcher | undefined,
): Promise<SearchResult> {
  const base = await wall.openDirectory(options.path ?? ".");
  const isMatch =
    options.pattern === undefined || options.pattern === "**"
      ? () => true
      : picomatch(options.pattern, { dot: true, basename: !options.pattern.includes("/") });
  const result: SearchResult = {
    files: [],
    matches: [],
    filesScanned: 0,
    bytesScanned: 0,
    binarySkipped: 0,
    truncated: false,
  };
  const buffer = Buffer.allocUnsafe(WINDOW);
  let found = 0;
  let budget = options.maxBytes;
  let sliceStart = performance.now();
  const stop = (by: "maxResults" | "maxBytes") => {
    result.truncated = true;
    result.truncatedBy = by;
  };
  const guard = matcher?.guard;

  for (const entry of walk(wall, base, {
    maxDepth: Number.POSITIVE_INFINITY,
    respectGitignore: !options.includeIgnored,
    ...(options.signal && { signal: options.signal }),
  })) {
    if (entry.type !== "file") continue;
    const sub = base.rel === "" ? entry.rel : entry.rel.slice(base.rel.length + 1);
    if (!isMatch(sub)) continue;
    if (found >= options.maxResults) {
      stop("maxResults");
      break;
    }
    if (performance.now() - sliceStart > YIELD_EVERY_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      options.signal?.throwIfAborted();
      sliceStart = performance.now();
    }
    if (matcher === undefined) {
      const st = sizeOfListed(entry.at);
      if (st !== undefined) {
        result.files.push({ path: entry.rel, size: st });
        found++;
      }
      continue;
    }
    if (budget <= 0) {
      stop("maxBytes");
      break;
    }
    const outcome = scanFile(wall, entry.at, entry.rel, matcher, buffer, budget);
    if (outcome === undefined || outcome.binary) guard?.dropFile();
    if (outcome === undefined) continue;
    budget -= outcome.bytes;
    result.bytesScanned += outcome.bytes;
    if (outcome.binary) {
      result.binarySkipped++;
      continue;
    }
    result.filesScanned++;
    if (guard === undefined) record(entry.rel, outcome.size, outcome.matches);
    else {
      guard.endFile(entry.rel, entry.abs);
      while (guard.waiting > BATCHES_AHEAD) await recordBatch(guard.take()!);
    }
  }
  if (guard !== undefined) {
    guard.flush();
    while (guard.waiting > 0) await recordBatch(guard.take()!);
  }
  if (matcher !== undefined && budget <= 0 && !result.truncated) stop("maxBytes");
  return result;

  function record(rel: string, size: number, matches: SearchMatch[]): void {
    if (matches.length === 0) return;
    result.files.push({ path: rel, size });
    for (const m of matches) {
      if (result.matches.length >= options.maxResults) {
        stop("maxResults");
        break;
      }
      result.matches.push(m);
    }
    found += matches.length;
  }

  /** Records the matches of a regex batch (batches come back in file order). */
  async function recordBatch(batch: Promise<FileMatches<SearchMatch>[]>): Promise<void> {
    let files: FileMatches<SearchMatch>[];
    try {
      files = await batch;
    } catch (error) {
      options.signal?.throwIfAborted();
      if (!(error instanceof RegexTimeoutError)) throw error;
      throw new WorkspaceError(
        "too-slow",
        `Regular expression /${matcher!.regex.source}/ ran longer than ${error.limitMs} ms on ${error.rel}: ` +
          "it most likely backtracks without end. Simplify it (no nested quantifiers such as (a+)+ " +
          "or (\\w*)*), anchor it, or search for plain text.",
        { path: error.rel },
      );
    }
    // Sizes only for files with matches, read now: one fstat per file scanned cost 4%.
    for (const file of files)
      if (file.matches.length > 0) record(file.rel, sizeInside(wall, file.abs, file.rel) ?? 0, file.matches);
  }
}

/** The size of a regular file the walk has just listed, by its descriptor path (no symlink followed). */
function sizeOfListed(at: string): number | undefined {
  try {
    const st = lstatSync(at);
    return st.isFile() ? st.size : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The size of the regular file at `abs`, read after the walk has moved on, so by path: opened
 * without following a symlink and checked through its descriptor to still be `rel`, so that a
 * parent swapped for a symlink meanwhile cannot show the size of a file outside.
 */
function sizeInside(wall: RootWall, abs: string, rel: string): number | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(abs, READ_FLAGS);
    const real = descriptorPathSync(fd);
    if (real !== undefined && wall.relOf(real) !== rel) return undefined;
    const st = fstatSync(fd);
    return st.isFile() ? st.size : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function compileQuery(query: string, options: SearchOptions): Matcher {
  const flags = options.caseSensitive === false ? "gi" : "g";
  try {
    const source = options.regex ? query : query.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    // `m`: `^` and `$` anchor at lines, as in grep.
    const regex = new RegExp(source, options.regex ? `${flags}mu` : flags);
    const limitMs = options.regexTimeoutMs ?? REGEX_TIMEOUT_MS;
    if (options.regex)
      return {
        regex,
        limitMs,
        guard: new RegexGuard(regex, matchLines, { maxText: MAX_LINE_TEXT, limitMs }),
      };
    return options.caseSensitive === false
      ? { regex, limitMs }
      : { regex, limitMs, literal: Buffer.from(query, "utf8") };
  } catch (error) {
    throw new WorkspaceError(
      "invalid-path",
      `Invalid regular expression ${JSON.stringify(query)}: ${(error as Error).message}`,
      {
        path: options.path ?? ".",
      },
    );
  }
}
