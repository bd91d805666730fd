import { McplexError } from "../errors.js";

/** The `format` of a recording's header line. */
export const RECORDING_FORMAT = "mcplex-recording";
/** The version of the line format this code writes and reads (docs/recording-format.md). */
export const RECORDING_VERSION = 1;

/** A JSON-RPC error as recorded: the wire's code, message and data (absent for local failures). */
export interface RecordedError {
  code?: number;
  message: string;
  data?: unknown;
  /** The mcplex error code of a failure that never reached the server (timeout, unavailable). */
  local?: string;
}

/** How the server introduced itself when the connection was made. */
export interface RecordedHandshake {
  protocolVersion?: string;
  serverInfo?: { name: string; version: string; [key: string]: unknown };
  capabilities?: Record<string, unknown>;
  instructions?: string;
}

/** The server's lists as the hub last fetched them. */
export interface RecordedLists {
  tools: Record<string, unknown>[];
  resources: Record<string, unknown>[];
  resourceTemplates: Record<string, unknown>[];
  prompts: Record<string, unknown>[];
}

/**
 * One line of a recording (JSON Lines, one object per line, `type` tells which). Timing: `at` is
 * wall-clock (ISO 8601); `ms` is milliseconds since the request with the same `id` was sent.
 */
export type RecordingLine =
  | { type: "header"; format: typeof RECORDING_FORMAT; version: number; server: string; createdAt: string }
  | ({ type: "server"; at: string } & RecordedHandshake)
  | ({ type: "lists"; at: string } & RecordedLists)
  | { type: "request"; id: number; at: string; method: string; params: Record<string, unknown> }
  | { type: "progress"; id: number; ms: number; progress: number; total?: number; message?: string }
  | { type: "result"; id: number; ms: number; result: unknown }
  | { type: "error"; id: number; ms: number; error: RecordedError }
  | { type: "cancelled"; id: number; ms: number; direction: "client" }
  | {
      type: "notification";
      at: string;
      direction: "server" | "client";
      method: string;
      params?: Record<string, unknown>;
      /** The request in flight when it came (the only one then), and how long after it. */
      id?: number;
      ms?: number;
    };

/** The line types a reader of version {@link RECORDING_VERSION} knows. */
const KNOWN_TYPES = new Set([
  "header",
  "server",
  "lists",
  "request",
  "progress",
  "result",
  "error",
  "cancelled",
  "notification",
]);

/**
 * Parses a recording's text into lines, checking the header. Unknown line types are skipped (a
 * newer writer may add some); a missing header, another format, or a newer version is refused.
 */
export function parseRecording(text: string, file: string): RecordingLine[] {
  const lines: RecordingLine[] = [];
  const raw = text.split("\n");
  raw.forEach((line, index) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      // A recording cut short by a crash ends in a partial line: the rest is still good.
      if (index === raw.length - 1 || raw.slice(index + 1).every((l) => l.trim() === "")) return;
      throw invalid(file, `line ${index + 1} is not JSON: ${(error as Error).message}`);
    }
    const type = (value as { type?: unknown } | null)?.type;
    if (typeof type !== "string") throw invalid(file, `line ${index + 1} has no "type"`);
    if (lines.length === 0) {
      const header = value as { format?: unknown; version?: unknown };
      if (type !== "header" || header.format !== RECORDING_FORMAT)
        throw invalid(file, `line 1 is not an ${RECORDING_FORMAT} header`);
      if (typeof header.version !== "number" || header.version > RECORDING_VERSION)
        throw invalid(
          file,
          `it is version ${String(header.version)}; this mcplex reads up to ${RECORDING_VERSION}`,
          "upgrade mcplex to replay it",
        );
    }
    if (KNOWN_TYPES.has(type)) lines.push(value as RecordingLine);
  });
  if (lines.length === 0) throw invalid(file, "it is empty");
  return lines;
}

function invalid(file: string, problem: string, hint = "record it again with `mcplex serve --record DIR`") {
  return new McplexError("INVALID_ARGUMENT", `${file} is not a usable recording: ${problem}`, { hint });
}

/** `value` without `_meta` keys at any depth: request ids and `_meta` never decide a match. */
export function withoutMeta(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutMeta);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    if (key === "_meta") continue;
    out[key] = withoutMeta((value as Record<string, unknown>)[key]);
  }
  return out;
}

/** The key two requests share when they ask the same thing: method and params, `_meta` left out, keys sorted. */
export function requestKey(method: string, params: unknown): string {
  return `${method} ${JSON.stringify(withoutMeta(params ?? {}))}`;
}
