/**
 * Finds tool calls that a model wrote into its text instead of `tool_calls`:
 * `<tool_call>{"name":...,"arguments":...}</tool_call>` (Hermes/Qwen style) and bare
 * `{"name":...,"arguments":...}` objects (Llama style). Text is held back only while a
 * tool-call prefix is still undecided; everything else passes through at once.
 */
import { finishCall, mintToolCallId, type ParsedToolCall } from "./tool-call-accumulator.js";

/** Which text forms to recognise. */
export type TextToolCallMode = "all" | "tags" | "off";

/** What one `push` or `flush` produced: text safe to show, and calls found. */
export interface TextToolCallOutput {
  text: string;
  calls: ParsedToolCall[];
}

const OPEN = "<tool_call>";
const CLOSE = "</tool_call>";
/** `{"name":` with any whitespace: a bare JSON tool call has started. */
const JSON_START = /^\{\s*"name"\s*:/;
/** Could still become `{"name":`. */
const JSON_PREFIX = /^\{\s*(?:"(?:n(?:a(?:m(?:e(?:"\s*)?)?)?)?)?)?$/;

/**
 * A streaming filter over a model's text deltas.
 *
 * @example
 * const parser = new TextToolCallParser();
 * const { text, calls } = parser.push(delta); // show `text`, execute `calls`
 * const rest = parser.flush(); // at the end of the stream
 */
export class TextToolCallParser {
  readonly #mode: TextToolCallMode;
  #buf = "";
  #state: "text" | "tag" | "json" = "text";
  // Bracket scanner state for bare JSON, kept across pushes.
  #depth = 0;
  #inString = false;
  #escaped = false;
  #scanned = 0;

  constructor(mode: TextToolCallMode = "all") {
    this.#mode = mode;
  }

  /** Feeds one text delta. */
  push(delta: string): TextToolCallOutput {
    if (this.#mode === "off") return { text: delta, calls: [] };
    this.#buf += delta;
    const out: TextToolCallOutput = { text: "", calls: [] };
    while (this.#step(out)) {
      // keep consuming while progress is made
    }
    return out;
  }

  /** Ends the stream: undecided text is released, an unclosed `<tool_call>` is still parsed. */
  flush(): TextToolCallOutput {
    const out: TextToolCallOutput = { text: "", calls: [] };
    if (this.#state === "tag") {
      const calls = parseCallPayload(this.#buf);
      if (calls) out.calls.push(...calls);
      else if (this.#buf.trim() !== "") out.calls.push(finishCall(mintToolCallId(), "", this.#buf, "text"));
    } else {
      out.text = this.#buf;
    }
    this.#buf = "";
    this.#state = "text";
    return out;
  }

  /** One unit of progress; returns false when it must wait for more text. */
  #step(out: TextToolCallOutput): boolean {
    const buf = this.#buf;
    if (buf === "") return false;
    if (this.#state === "tag") {
      const end = buf.indexOf(CLOSE);
      if (end < 0) return false;
      const payload = buf.slice(0, end);
      out.calls.push(...(parseCallPayload(payload) ?? [finishCall(mintToolCallId(), "", payload, "text")]));
      this.#buf = buf.slice(end + CLOSE.length);
      this.#state = "text";
      return true;
    }
    if (this.#state === "json") return this.#scanJson(out);

    const start = this.#nextCandidate(buf);
    if (start < 0) {
      out.text += buf;
      this.#buf = "";
      return false;
    }
    out.text += buf.slice(0, start);
    const rest = buf.slice(start);
    this.#buf = rest;
    if (rest.startsWith("<")) {
      if (rest.startsWith(OPEN)) {
        this.#buf = rest.slice(OPEN.length);
        this.#state = "tag";
        return true;
      }
      if (OPEN.startsWith(rest)) return false;
    } else if (JSON_START.test(rest)) {
      this.#state = "json";
      this.#depth = 0;
      this.#inString = false;
      this.#escaped = false;
      this.#scanned = 0;
      return true;
    } else if (JSON_PREFIX.test(rest)) {
      return false;
    }
    out.text += rest[0];
    this.#buf = rest.slice(1);
    return true;
  }

  #nextCandidate(buf: string): number {
    for (let i = 0; i < buf.length; i++) {
      const c = buf[i];
      if (c === "<" || (c === "{" && this.#mode === "all")) return i;
    }
    return -1;
  }

  /** Scans a bare JSON object to its closing brace, then decides whether it was a tool call. */
  #scanJson(out: TextToolCallOutput): boolean {
    const buf = this.#buf;
    for (let i = this.#scanned; i < buf.length; i++) {
      const c = buf[i];
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (c === "\\") this.#escaped = true;
        else if (c === '"') this.#inString = false;
      } else if (c === '"') this.#inString = true;
      else if (c === "{" || c === "[") this.#depth++;
      else if (c === "}" || c === "]") {
        this.#depth--;
        if (this.#depth === 0) {
          const candidate = buf.slice(0, i + 1);
          const calls = parseCallPayload(candidate, true);
          if (calls) out.calls.push(...calls);
          else out.text += candidate;
          this.#buf = buf.slice(i + 1);
          this.#state = "text";
          return true;
        }
      }
    }
    this.#scanned = buf.length;
    return false;
  }
}

/** Parses `{"name":..,"arguments":..}` (or an array of them); undefined when it is not a tool call. */
function parseCallPayload(payload: string, requireArguments = false): ParsedToolCall[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload.trim());
  } catch {
    return undefined;
  }
  const items = Array.isArray(value) ? value : [value];
  const calls: ParsedToolCall[] = [];
  for (const item of items) {
    if (typeof item !== "object" || item === null) return undefined;
    const record = item as Record<string, unknown>;
    const fn = (
      typeof record.function === "object" && record.function !== null ? record.function : record
    ) as Record<string, unknown>;
    if (typeof fn.name !== "string") return undefined;
    const args = fn.arguments ?? fn.parameters;
    // Bare JSON must look like a call, not like any object with a `name`.
    if (requireArguments && !("arguments" in fn || "parameters" in fn)) return undefined;
    if (args !== undefined && typeof args !== "object" && typeof args !== "string") return undefined;
    const text = args === undefined ? "" : typeof args === "string" ? args : JSON.stringify(args);
    calls.push(finishCall(mintToolCallId(), fn.name, text, "text"));
  }
  return calls.length > 0 ? calls : undefined;
}
