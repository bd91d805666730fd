import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { looksBinary } from "./file-content.js";
import { descriptorPathSync, READ_FLAGS } from "./fs-checks.js";
import type { RegexGuard } from "./regex-guard.js";
import type { RootWall } from "./root-wall.js";

/** Bytes read from a file at a time, into the search's one reused buffer. */
export const WINDOW = 1024 * 1024;
/** Longest line text a match carries; longer lines are cut and end in "…". */
export const MAX_LINE_TEXT = 400;

/** One line that matched. */
export interface SearchMatch {
  path: string;
  /** 1-based line number. */
  line: number;
  /** 1-based column (UTF-16 units) of the first match on the line. */
  column: number;
  text: string;
}

/** What a search looks for in each file, compiled once from its query. */
export interface Matcher {
  regex: RegExp;
  /** Bytes to look for first when the query is plain case-sensitive text: no hit, no decoding. */
  literal?: Buffer;
  /** A caller's regex runs in a worker with a time limit (it could backtrack for ever). */
  guard?: RegexGuard<SearchMatch>;
  limitMs: number;
}

/** What {@link scanFile} read of one file and found in it. */
export interface FileOutcome {
  matches: SearchMatch[];
  /** Texts of a regex search handed to the worker (their matches come later). */
  pieces: number;
  size: number;
  bytes: number;
  binary: boolean;
}

/**
 * Reads one file the walk listed (`at`, by its directory's descriptor path) in windows of
 * `buf.length` bytes, at most `budget` in all, and matches `matcher` line by line: a window ends
 * at its last newline and the partial line is carried into the next, so every line is matched
 * whole and numbered right. A plain query decodes only windows holding its bytes; a regex query
 * hands the texts to its worker (`matcher.guard`) and its matches come later. `undefined` means
 * skip: the file vanished, is not a regular file any more, or was read from outside `rel`.
 */
export function scanFile(
  wall: RootWall,
  at: string,
  rel: string,
  matcher: Matcher,
  buf: Buffer,
  budget: number,
): FileOutcome | undefined {
  let fd: number;
  try {
    fd = openSync(at, READ_FLAGS);
  } catch {
    return undefined; // vanished, or turned into a symlink since the walk: skip
  }
  try {
    // No fstat: the walk saw a regular file, O_NOFOLLOW refuses a symlink swapped in since,
    // O_NONBLOCK keeps a FIFO from blocking, and reading a directory throws. One syscall
    // less per file is a tenth of a content search; the size is read only for a hit.
    const outcome: FileOutcome = { matches: [], pieces: 0, size: 0, bytes: 0, binary: false };
    let position = 0;
    let carry: Buffer = EMPTY;
    let lineBase = 1;
    const scan = (chunk: Buffer, last: boolean) => {
      // Plain text not in the chunk: no decoding; its lines count only if more chunks follow.
      if (matcher.literal === undefined || chunk.indexOf(matcher.literal) !== -1) {
        if (matcher.guard !== undefined) {
          matcher.guard.add(chunk, rel, lineBase);
          outcome.pieces++;
        } else {
          const text = chunk.toString("utf8");
          for (const m of matchLines(text, matcher.regex, rel, lineBase, MAX_LINE_TEXT))
            outcome.matches.push(m);
        }
      }
      if (!last) lineBase += countNewlines(chunk);
    };
    while (true) {
      const want = Math.min(buf.length, budget - outcome.bytes);
      if (want <= 0) break;
      const bytesRead = readSync(fd, buf, 0, want, position);
      if (bytesRead === 0) break;
      outcome.bytes += bytesRead;
      if (position === 0 && looksBinary(buf.subarray(0, bytesRead))) {
        outcome.binary = true;
        return outcome;
      }
      position += bytesRead;
      const eof = bytesRead < want;
      // Keep the last partial line for the next window, unless this is the end.
      let cut = bytesRead;
      if (!eof) {
        const nl = buf.subarray(0, bytesRead).lastIndexOf(10);
        if (nl !== -1) cut = nl + 1;
      }
      scan(carry.length === 0 ? buf.subarray(0, cut) : Buffer.concat([carry, buf.subarray(0, cut)]), eof);
      carry = cut === bytesRead ? EMPTY : Buffer.from(buf.subarray(cut, bytesRead));
      if (eof) break;
    }
    if (carry.length > 0) scan(carry, true);
    // Opened through the walk's descriptor of its directory; this catches that directory moved out since.
    // Checked only when there is something to report: nothing read elsewhere is ever shown.
    // A regex search's texts are matched later, in the worker: checked whenever there are some.
    if (outcome.matches.length > 0 || outcome.pieces > 0) {
      const real = descriptorPathSync(fd);
      if (real !== undefined && wall.relOf(real) !== rel) return undefined;
      if (outcome.matches.length > 0) outcome.size = fstatSync(fd).size;
    }
    return outcome;
  } catch {
    return undefined; // not a readable regular file any more (a directory, a device): skip
  } finally {
    closeSync(fd);
  }
}

/**
 * The lines of `text` that `regex` matches, one match per line. Self-contained (no
 * module-level names): {@link RegexGuard} compiles it again in its worker.
 */
export function matchLines(
  text: string,
  regex: RegExp,
  rel: string,
  lineBase: number,
  maxText: number,
): SearchMatch[] {
  const out: SearchMatch[] = [];
  regex.lastIndex = 0;
  let line = lineBase;
  let counted = 0;
  for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
    for (let i = text.indexOf("\n", counted); i !== -1 && i < m.index; i = text.indexOf("\n", i + 1)) {
      line++;
      counted = i + 1;
    }
    const start = text.lastIndexOf("\n", m.index - 1) + 1;
    let end = text.indexOf("\n", m.index + Math.max(m[0].length - 1, 0));
    if (end === -1) end = text.length;
    const full = text.slice(start, end).replace(/\r$/, "");
    out.push({
      path: rel,
      line,
      column: m.index - start + 1,
      text: full.length > maxText ? `${full.slice(0, maxText)}…` : full,
    });
    // One match per line: continue after this line.
    regex.lastIndex = end + 1;
    if (end >= text.length) break;
  }
  return out;
}

function countNewlines(chunk: Buffer): number {
  let n = 0;
  for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) n++;
  return n;
}

const EMPTY = Buffer.alloc(0);
