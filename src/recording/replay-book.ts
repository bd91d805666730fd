import { readFileSync } from "node:fs";
import { McplexError } from "../errors.js";
import {
  parseRecording,
  type RecordedError,
  type RecordedHandshake,
  type RecordedLists,
  type RecordingLine,
  requestKey,
  withoutMeta,
} from "./recording-format.js";
import { REDACTED_FIELD } from "./recording-writer.js";

/** Something that happens while a request is answered, `ms` after it was sent. */
export type ReplayEvent =
  | { kind: "progress"; ms: number; progress: number; total?: number; message?: string }
  | { kind: "notification"; ms: number; method: string; params?: Record<string, unknown> };

/** One recorded request with what came back for it. */
export interface Exchange {
  method: string;
  params: Record<string, unknown>;
  /** The answer; `undefined` when the request was cancelled or the recording ends before it. */
  answer?: { ms: number; result: unknown } | { ms: number; error: RecordedError };
  /** Progress and notifications during the request, in order. */
  events: ReplayEvent[];
}

/** What a {@link ReplayBook} gives for a request. */
export type Lookup =
  | { found: true; exchange: Exchange }
  | { found: false; reason: string; closest?: { method: string; params: Record<string, unknown> } };

/** How answers are picked: in recorded order per method and params, or any recorded one. */
export type ReplayMode = "sequential" | "match";

/**
 * A recording read for replay: the handshake and lists, and the exchanges by request (method and
 * params, ids and `_meta` ignored). `sequential` hands out the answers to the same request in the
 * order they were recorded (a server whose state changes between two identical reads); `match`
 * answers each request with the first recorded answer to it, in any order.
 */
export class ReplayBook {
  readonly server: string;
  readonly handshake: RecordedHandshake;
  readonly lists: RecordedLists;
  readonly exchanges: readonly Exchange[];
  readonly #byKey = new Map<string, Exchange[]>();
  readonly #used = new Map<string, number>();
  readonly #mode: ReplayMode;

  constructor(lines: readonly RecordingLine[], mode: ReplayMode = "sequential") {
    this.#mode = mode;
    let server = "";
    let handshake: RecordedHandshake = {};
    let lists: RecordedLists = { tools: [], resources: [], resourceTemplates: [], prompts: [] };
    const exchanges: Exchange[] = [];
    // Ids restart in each file: an exchange is found by its id within the file it began in.
    let open = new Map<number, Exchange>();
    for (const line of lines) {
      switch (line.type) {
        case "header":
          server ||= line.server;
          open = new Map();
          break;
        case "server": {
          const { type: _, at: __, ...rest } = line;
          handshake = rest;
          break;
        }
        case "lists": {
          const { type: _, at: __, ...rest } = line;
          lists = rest;
          break;
        }
        case "request": {
          const exchange: Exchange = { method: line.method, params: line.params ?? {}, events: [] };
          exchanges.push(exchange);
          open.set(line.id, exchange);
          break;
        }
        case "progress": {
          const { type: _, id, ...rest } = line;
          open.get(id)?.events.push({ kind: "progress", ...rest });
          break;
        }
        case "notification":
          if (line.direction === "server" && line.id !== undefined && line.ms !== undefined)
            open.get(line.id)?.events.push({
              kind: "notification",
              ms: line.ms,
              method: line.method,
              ...(line.params === undefined ? {} : { params: line.params }),
            });
          break;
        case "result":
        case "error": {
          const exchange = open.get(line.id);
          if (exchange === undefined) break;
          exchange.answer =
            line.type === "result"
              ? { ms: line.ms, result: line.result }
              : { ms: line.ms, error: line.error };
          open.delete(line.id);
          break;
        }
        case "cancelled":
          open.delete(line.id);
          break;
      }
    }
    this.server = server;
    this.handshake = handshake;
    this.lists = lists;
    this.exchanges = exchanges.filter((e) => e.answer !== undefined);
    for (const exchange of this.exchanges) {
      const key = requestKey(exchange.method, exchange.params);
      const list = this.#byKey.get(key);
      if (list === undefined) this.#byKey.set(key, [exchange]);
      else list.push(exchange);
    }
  }

  /** Reads recording files (the oldest first) into one book. */
  static read(files: readonly string[], mode: ReplayMode = "sequential"): ReplayBook {
    const lines: RecordingLine[] = [];
    for (const file of files) {
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch (error) {
        throw new McplexError(
          "INVALID_ARGUMENT",
          `cannot read the recording ${file}: ${(error as Error).message}`,
          { hint: "record one with `mcplex serve --record DIR`, or fix the path in recording:" },
          { cause: error },
        );
      }
      lines.push(...parseRecording(text, file));
    }
    return new ReplayBook(lines, mode);
  }

  /** The recorded exchange answering `method` with `params`, or why there is none and the closest. */
  lookup(method: string, params: Record<string, unknown> | undefined): Lookup {
    let key = requestKey(method, params);
    // A recorded request whose sensitive fields were redacted matches whatever the live one sends there.
    if (!this.#byKey.has(key)) {
      const redacted = this.exchanges.find(
        (e) => e.method === method && matchesRedacted(withoutMeta(e.params), withoutMeta(params ?? {})),
      );
      if (redacted !== undefined) key = requestKey(redacted.method, redacted.params);
    }
    const candidates = this.#byKey.get(key);
    if (candidates !== undefined) {
      if (this.#mode === "match") return { found: true, exchange: candidates[0]! };
      const used = this.#used.get(key) ?? 0;
      if (used < candidates.length) {
        this.#used.set(key, used + 1);
        return { found: true, exchange: candidates[used]! };
      }
      return {
        found: false,
        reason: `all ${candidates.length} recorded answer(s) to this request were used (mode: sequential)`,
      };
    }
    const closest = this.closest(method, params ?? {});
    return {
      found: false,
      reason: "the recording has no answer to this request",
      ...(closest === undefined ? {} : { closest }),
    };
  }

  /** The recorded request nearest to this one: the same method first, then the fewest differing params. */
  closest(
    method: string,
    params: Record<string, unknown>,
  ): { method: string; params: Record<string, unknown> } | undefined {
    const sameMethod = this.exchanges.filter((e) => e.method === method);
    const pool = sameMethod.length > 0 ? sameMethod : this.exchanges;
    let best: Exchange | undefined;
    let bestDistance = Infinity;
    for (const exchange of pool) {
      const distance = paramDistance(params, exchange.params);
      if (distance < bestDistance) {
        best = exchange;
        bestDistance = distance;
      }
    }
    return best === undefined ? undefined : { method: best.method, params: best.params };
  }
}

/** Whether `live` is `recorded` with any value in place of each `"[redacted]"` (and only there). */
function matchesRedacted(recorded: unknown, live: unknown): boolean {
  if (recorded === REDACTED_FIELD) return true;
  if (Array.isArray(recorded))
    return (
      Array.isArray(live) &&
      live.length === recorded.length &&
      recorded.every((item, i) => matchesRedacted(item, live[i]))
    );
  if (recorded !== null && typeof recorded === "object") {
    if (live === null || typeof live !== "object" || Array.isArray(live)) return false;
    const keys = Object.keys(recorded);
    if (keys.length !== Object.keys(live).length) return false;
    return keys.every(
      (k) =>
        k in live &&
        matchesRedacted((recorded as Record<string, unknown>)[k], (live as Record<string, unknown>)[k]),
    );
  }
  return recorded === live;
}

/** How many leaf values differ between two params (a path present in one only counts once). */
export function paramDistance(a: unknown, b: unknown): number {
  const left = leaves(withoutMeta(a));
  const right = leaves(withoutMeta(b));
  let distance = 0;
  for (const [path, value] of left) if (right.get(path) !== value) distance++;
  for (const path of right.keys()) if (!left.has(path)) distance++;
  return distance;
}

function leaves(value: unknown, path = "", out = new Map<string, string>()): Map<string, string> {
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0) out.set(path, JSON.stringify(value));
    for (const [key, item] of entries) leaves(item, `${path}/${key}`, out);
  } else out.set(path, JSON.stringify(value));
  return out;
}
