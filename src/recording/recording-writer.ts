import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { redactor } from "../config/redact.js";
import { McplexError } from "../errors.js";
import { RECORDING_FORMAT, RECORDING_VERSION, type RecordingLine } from "./recording-format.js";

/** What a sensitive field's value becomes on disk. */
export const REDACTED_FIELD = "[redacted]";
/** Default size of one recording file before it is rotated: 10 MiB. */
export const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
/** Default number of rotated files kept besides the current one. */
export const DEFAULT_MAX_FILES = 5;

/** Options of a {@link RecordingWriter}. */
export interface RecordingWriterOptions {
  dir: string;
  server: string;
  /** Values hidden wherever they occur (the config's secrets), raw and encoded: they become `***`. */
  secrets?: readonly string[];
  /** Keys of params, results and notifications (at any depth, any case) whose values become `[redacted]`. */
  redactKeys?: readonly string[];
  /** Rotate once the current file would grow past this many bytes. Default 10 MiB. */
  maxBytes?: number;
  /** Rotated files kept (`NAME.1.jsonl` the newest). Default 5. */
  maxFiles?: number;
}

/** The fields of a line that carry what the server or client sent. */
const PAYLOADS = ["params", "result", "error"];

/** The file a server's recording is written to in `dir` (the current part; older ones are `NAME.N.jsonl`). */
export function recordingFile(dir: string, server: string, part = 0): string {
  return join(dir, part === 0 ? `${server}.jsonl` : `${server}.${part}.jsonl`);
}

/**
 * Appends a server's traffic to `DIR/SERVER.jsonl`, one line per message, redacted before it is
 * written. Past `maxBytes` the file is rotated (`SERVER.1.jsonl` is the previous one) and the new
 * one starts with the header, the latest handshake and lists and the requests still unanswered,
 * so every file replays on its own.
 * Writes are synchronous: lines land in the order things happened, and a crash loses none.
 */
export class RecordingWriter {
  readonly #options: Required<Omit<RecordingWriterOptions, "secrets" | "redactKeys">>;
  readonly #hideSecrets: (text: string) => string;
  readonly #keys: Set<string>;
  #fd: number | undefined;
  #size = 0;
  /** The latest `server` and `lists` lines, repeated at the top of each new file. */
  #context = new Map<"server" | "lists", string>();
  /** Requests not answered yet, repeated after the context in a new file so their answers have a question. */
  #pending = new Map<number, string>();

  constructor(options: RecordingWriterOptions) {
    this.#options = {
      dir: options.dir,
      server: options.server,
      maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES,
      maxFiles: options.maxFiles ?? DEFAULT_MAX_FILES,
    };
    this.#hideSecrets = redactor(options.secrets ?? []);
    this.#keys = new Set((options.redactKeys ?? []).map((key) => key.toLowerCase()));
  }

  /** The current file. */
  get file(): string {
    return recordingFile(this.#options.dir, this.#options.server);
  }

  /** Writes one line (redacted). Failing to write is reported once as an error thrown here. */
  write(line: RecordingLine): void {
    const text = `${JSON.stringify(this.#redact(this.#hideFields(line)))}\n`;
    const bytes = Buffer.byteLength(text);
    if (this.#fd === undefined) this.#open();
    else if (this.#size + bytes > this.#options.maxBytes && this.#size > 0) this.#rotate();
    this.#append(text, bytes);
    if (line.type === "server" || line.type === "lists") this.#context.set(line.type, text);
    else if (line.type === "request") this.#pending.set(line.id, text);
    else if (line.type === "result" || line.type === "error" || line.type === "cancelled")
      this.#pending.delete(line.id);
  }

  /** Closes the file; safe to call twice. */
  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }

  #open(): void {
    const { dir, server } = this.#options;
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      // A file from an earlier run is kept as the newest rotated part, never appended to:
      // each file has one header and one run's ids.
      if (existsSync(this.file) && statSync(this.file).size > 0) this.#shift();
      this.#fd = openSync(this.file, "w", 0o600);
    } catch (error) {
      throw new McplexError(
        "INVALID_ARGUMENT",
        `cannot write the recording of ${server} in ${dir}: ${(error as Error).message}`,
        { server, hint: "give --record (or record.dir) a directory mcplex may write" },
        { cause: error },
      );
    }
    this.#size = 0;
    const header: RecordingLine = {
      type: "header",
      format: RECORDING_FORMAT,
      version: RECORDING_VERSION,
      server,
      createdAt: new Date().toISOString(),
    };
    const text = `${JSON.stringify(header)}\n`;
    this.#append(text, Buffer.byteLength(text));
    for (const kind of ["server", "lists"] as const) {
      const context = this.#context.get(kind);
      if (context !== undefined) this.#append(context, Buffer.byteLength(context));
    }
    for (const request of this.#pending.values()) this.#append(request, Buffer.byteLength(request));
  }

  #rotate(): void {
    this.close();
    this.#open();
  }

  /** `NAME.jsonl` becomes `NAME.1.jsonl`, `.1` becomes `.2`, and the oldest past `maxFiles` goes. */
  #shift(): void {
    const { dir, server, maxFiles } = this.#options;
    rmSync(recordingFile(dir, server, maxFiles), { force: true });
    for (let part = maxFiles - 1; part >= 0; part--) {
      const from = recordingFile(dir, server, part);
      if (existsSync(from)) {
        if (maxFiles === 0) rmSync(from, { force: true });
        else renameSync(from, recordingFile(dir, server, part + 1));
      }
    }
  }

  #append(text: string, bytes: number): void {
    try {
      writeSync(this.#fd!, text);
    } catch (error) {
      throw new McplexError(
        "INVALID_ARGUMENT",
        `cannot write the recording of ${this.#options.server} to ${this.file}: ${(error as Error).message}`,
        { server: this.#options.server, hint: "free some space, or record to another directory" },
        { cause: error },
      );
    }
    this.#size += bytes;
  }

  /** The line with sensitive fields replaced in what the server and client sent (never in the line's own fields). */
  #hideFields(line: RecordingLine): RecordingLine {
    if (this.#keys.size === 0) return line;
    const copy: Record<string, unknown> = { ...line };
    for (const payload of PAYLOADS)
      if (copy[payload] !== undefined) copy[payload] = this.#fields(copy[payload]);
    return copy as RecordingLine;
  }

  #fields(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((item) => this.#fields(item));
    if (value === null || typeof value !== "object") return value;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value))
      out[key] = this.#keys.has(key.toLowerCase()) ? REDACTED_FIELD : this.#fields(item);
    return out;
  }

  /** A copy with secrets taken out of every string and key. */
  #redact(value: unknown): unknown {
    if (typeof value === "string") return this.#hideSecrets(value);
    if (Array.isArray(value)) return value.map((item) => this.#redact(item));
    if (value === null || typeof value !== "object") return value;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[this.#hideSecrets(key)] = this.#redact(item);
    return out;
  }
}
