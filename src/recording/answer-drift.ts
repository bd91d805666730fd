import type { RecordedError } from "./recording-format.js";
import type { ReplayBook } from "./replay-book.js";

/** One difference between a recorded answer and the live one, at a JSON path. */
export interface Difference {
  /** JSON Pointer into the answer (`/result/content/0/text`); `""` for the whole. */
  path: string;
  recorded: unknown;
  live: unknown;
}

/** A recorded request whose live answer changed. */
export interface Drift {
  /** Its place among the recorded requests, from 1. */
  index: number;
  method: string;
  params: Record<string, unknown>;
  differences: Difference[];
}

/** What {@link verifyRecording} found. */
export interface VerifyReport {
  /** Requests sent. */
  checked: number;
  drifts: Drift[];
}

/** A live answer as {@link verifyRecording} compares it. */
export type LiveAnswer = { result: unknown } | { error: RecordedError };

/** At most this many differences are kept per answer. */
const MAX_DIFFERENCES = 20;

/**
 * Sends every recorded request again, in recorded order, and compares each live answer with the
 * recorded one. What is ignored, and why: `_meta` anywhere (ids, trace context, progress tokens
 * and `mcplex/simulated` live there, never the answer), two strings that are both ISO 8601 times
 * or both UUIDs (a time or id minted per call is not a change of behaviour), and text holding
 * JSON is compared as JSON under the same rules. The tool list is compared too, as request 0.
 */
export async function verifyRecording(
  book: ReplayBook,
  send: (method: string, params: Record<string, unknown>) => Promise<LiveAnswer>,
  lists?: { tools: unknown },
): Promise<VerifyReport> {
  const drifts: Drift[] = [];
  if (lists !== undefined) {
    const differences = diff({ tools: byName(book.lists.tools) }, { tools: byName(lists.tools) });
    if (differences.length > 0) drifts.push({ index: 0, method: "tools/list", params: {}, differences });
  }
  let index = 0;
  for (const exchange of book.exchanges) {
    index++;
    const live = await send(exchange.method, exchange.params);
    const recorded = exchange.answer!;
    const differences =
      "result" in recorded
        ? diff({ result: recorded.result }, live)
        : diff(
            { error: errorShape(recorded.error) },
            "error" in live ? { error: errorShape(live.error) } : live,
          );
    if (differences.length > 0)
      drifts.push({ index, method: exchange.method, params: exchange.params, differences });
  }
  return { checked: index, drifts };
}

/** Tools by name: a server may list them in another order without changing any. */
function byName(tools: unknown): unknown {
  if (!Array.isArray(tools)) return tools;
  return Object.fromEntries(tools.map((tool: { name?: unknown }) => [String(tool.name), tool]));
}

/** What of an error is compared: its code and message (a local failure has its mcplex code instead). */
function errorShape(error: RecordedError): Record<string, unknown> {
  return { code: error.code ?? error.local ?? null, message: error.message };
}

/** The differences between two JSON values, ignoring what {@link verifyRecording} says it ignores. */
export function diff(recorded: unknown, live: unknown, path = "", out: Difference[] = []): Difference[] {
  if (out.length >= MAX_DIFFERENCES) return out;
  if (same(recorded, live)) return out;
  if (Array.isArray(recorded) && Array.isArray(live)) {
    const length = Math.max(recorded.length, live.length);
    for (let i = 0; i < length; i++) {
      if (i >= recorded.length || i >= live.length) {
        out.push({ path: `${path}/${i}`, recorded: recorded[i], live: live[i] });
        continue;
      }
      diff(recorded[i], live[i], `${path}/${i}`, out);
    }
    return out;
  }
  if (isObject(recorded) && isObject(live)) {
    const keys = new Set([...Object.keys(recorded), ...Object.keys(live)]);
    for (const key of keys) {
      if (key === "_meta") continue;
      const at = `${path}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`;
      if (!(key in recorded) || !(key in live))
        out.push({ path: at, recorded: recorded[key], live: live[key] });
      else diff(recorded[key], live[key], at, out);
    }
    return out;
  }
  out.push({ path, recorded, live });
  return out;
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === "string" && typeof b === "string") {
    if (ISO_TIME.test(a) && ISO_TIME.test(b)) return true;
    if (UUID.test(a) && UUID.test(b)) return true;
    // Text holding JSON (a tool's content) is compared as JSON, so its times and ids are forgiven too.
    const left = jsonOf(a);
    const right = jsonOf(b);
    return left !== undefined && right !== undefined && diff(left, right).length === 0;
  }
  return false;
}

function jsonOf(text: string): unknown {
  const first = text.trimStart()[0];
  if (first !== "{" && first !== "[") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
