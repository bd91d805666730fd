import { pathToFileURL } from "node:url";
import type { OpenedFile } from "./root-wall.js";
import { WorkspaceError } from "./workspace-error.js";

/** How many leading bytes are sniffed to tell binary from text. */
export const SNIFF_BYTES = 8192;

/** A buffer is taken as binary when its first {@link SNIFF_BYTES} bytes hold a NUL (as git and grep do). */
export function looksBinary(buf: Uint8Array): boolean {
  // A native search: a byte loop in JavaScript was a tenth of a whole content search.
  return buf.subarray(0, Math.min(buf.length, SNIFF_BYTES)).indexOf(0) !== -1;
}

/** A byte count as people read it: `1.5 MiB (1572864 bytes)`. */
export function formatSize(bytes: number): string {
  const units = ["KiB", "MiB", "GiB"];
  let value = bytes;
  let unit = "bytes";
  for (const u of units) {
    if (value < 1024) break;
    value /= 1024;
    unit = u;
  }
  return unit === "bytes" ? `${bytes} bytes` : `${value.toFixed(1)} ${unit} (${bytes} bytes)`;
}

/** Options of {@link readTextFile}. */
export interface ReadTextOptions {
  /** Largest file (or line-range output) returned, in bytes. */
  maxBytes: number;
  /** First line to return, 1-based. */
  startLine?: number;
  /** Last line to return, 1-based, inclusive. */
  endLine?: number;
}

/** What {@link readTextFile} returns. */
export interface TextRead {
  content: string;
  startLine: number;
  endLine: number;
  /** Known when the whole file was read. */
  totalLines?: number;
  truncated: boolean;
}

/**
 * Read an opened file as UTF-8 text, whole or a line range. Refuses binary files and, without
 * a line range, files over `maxBytes`, with the size in the message. A line range is streamed,
 * so it works on files of any size.
 */
export async function readTextFile(
  file: OpenedFile,
  input: string,
  options: ReadTextOptions,
): Promise<TextRead> {
  const head = Buffer.allocUnsafe(Math.min(SNIFF_BYTES, file.size));
  const { bytesRead } = await file.handle.read(head, 0, head.length, 0);
  if (looksBinary(head.subarray(0, bytesRead))) {
    throw new WorkspaceError(
      "binary",
      `'${input}' is a binary file (${formatSize(file.size)}); read it as the resource ${fileUri(file.abs)} to get base64 contents`,
      { path: input },
    );
  }
  const ranged = options.startLine !== undefined || options.endLine !== undefined;
  if (!ranged) {
    if (file.size > options.maxBytes) {
      throw new WorkspaceError(
        "too-large",
        `'${input}' is ${formatSize(file.size)}, over the ${formatSize(options.maxBytes)} read limit; read a line range (startLine/endLine) or use search_files`,
        { path: input },
      );
    }
    const content = (await file.handle.readFile()).toString("utf8");
    const totalLines = countLines(content);
    return { content, startLine: 1, endLine: totalLines, totalLines, truncated: false };
  }
  return readLineRange(
    file,
    options.startLine ?? 1,
    options.endLine ?? Number.POSITIVE_INFINITY,
    options.maxBytes,
  );
}

async function readLineRange(
  file: OpenedFile,
  start: number,
  end: number,
  maxBytes: number,
): Promise<TextRead> {
  const chunks: Buffer[] = [];
  let kept = 0;
  let line = 1;
  let truncated = false;
  let lastLine = start - 1;
  const buf = Buffer.allocUnsafe(64 * 1024);
  let position = 0;
  outer: while (true) {
    const { bytesRead } = await file.handle.read(buf, 0, buf.length, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    let from = 0;
    while (from < bytesRead) {
      const nl = buf.indexOf(10, from);
      const hasNewline = nl !== -1 && nl < bytesRead;
      const stop = hasNewline ? nl + 1 : bytesRead;
      if (line >= start && line <= end) {
        const piece = buf.subarray(from, stop);
        if (kept + piece.length > maxBytes) {
          chunks.push(Buffer.from(piece.subarray(0, maxBytes - kept)));
          kept = maxBytes;
          truncated = true;
          lastLine = line;
          break outer;
        }
        chunks.push(Buffer.from(piece));
        kept += piece.length;
        lastLine = line;
      }
      if (hasNewline) line++;
      from = stop;
      if (line > end) break outer;
    }
  }
  return { content: Buffer.concat(chunks).toString("utf8"), startLine: start, endLine: lastLine, truncated };
}

function countLines(text: string): number {
  if (text === "") return 0;
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n : n + 1;
}

/** The `file://` URI of an absolute path. */
export function fileUri(abs: string): string {
  return pathToFileURL(abs).href;
}

const MIME: Record<string, string> = {
  txt: "text/plain",
  md: "text/markdown",
  markdown: "text/markdown",
  html: "text/html",
  htm: "text/html",
  css: "text/css",
  csv: "text/csv",
  tsv: "text/tab-separated-values",
  xml: "application/xml",
  svg: "image/svg+xml",
  js: "text/javascript",
  mjs: "text/javascript",
  cjs: "text/javascript",
  jsx: "text/javascript",
  ts: "text/x-typescript",
  tsx: "text/x-typescript",
  mts: "text/x-typescript",
  cts: "text/x-typescript",
  json: "application/json",
  jsonl: "application/jsonl",
  yaml: "application/yaml",
  yml: "application/yaml",
  toml: "application/toml",
  py: "text/x-python",
  rs: "text/x-rust",
  go: "text/x-go",
  java: "text/x-java",
  c: "text/x-c",
  h: "text/x-c",
  cpp: "text/x-c++",
  hpp: "text/x-c++",
  sh: "application/x-sh",
  sql: "application/sql",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  ico: "image/x-icon",
  pdf: "application/pdf",
  zip: "application/zip",
  gz: "application/gzip",
  tar: "application/x-tar",
  wasm: "application/wasm",
  mp3: "audio/mpeg",
  wav: "audio/wav",
  mp4: "video/mp4",
};

/** MIME type from a file name's extension; `undefined` when unknown. */
export function mimeTypeOf(name: string): string | undefined {
  const dot = name.lastIndexOf(".");
  if (dot <= 0) return undefined;
  return MIME[name.slice(dot + 1).toLowerCase()];
}
