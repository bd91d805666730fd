/**
 * Assembles streamed tool-call fragments into whole calls, tolerating what providers
 * really send: missing `index`, every call at `index: 0`, whole calls in one chunk,
 * late names, object arguments, empty or duplicate ids.
 */
import { randomUUID } from "node:crypto";
import type { ChatToolCallDelta } from "./chat-types.js";

/** A finished tool call, ready to execute. */
export interface ParsedToolCall {
  /** Unique within the step; minted when the provider sent none or a duplicate. */
  id: string;
  name: string;
  /** The arguments as JSON text (`"{}"` when the provider sent none). */
  arguments: string;
  /** The parsed arguments, when they are a JSON object. */
  input?: Record<string, unknown>;
  /** Why the arguments could not be used, when they could not. */
  argumentsError?: string;
  /** Where the call came from: the `tool_calls` field, or the text. */
  source: "native" | "text";
}

interface Slot {
  index: number | undefined;
  id: string;
  name: string;
  args: string;
}

/** Mints a tool-call id in OpenAI's style. */
export function mintToolCallId(): string {
  return `call_${randomUUID().replace(/-/g, "").slice(0, 24)}`;
}

/**
 * Accumulates `delta.tool_calls` fragments of one streamed response, in arrival order.
 *
 * @example
 * const acc = new ToolCallAccumulator();
 * for await (const chunk of stream) acc.push(chunk.choices[0]?.delta.tool_calls);
 * const calls = acc.finish();
 */
export class ToolCallAccumulator {
  readonly #slots: Slot[] = [];

  /** True once any fragment has arrived. */
  get started(): boolean {
    return this.#slots.length > 0;
  }

  /** Adds the fragments of one delta. */
  push(fragments: ChatToolCallDelta[] | null | undefined): void {
    if (!Array.isArray(fragments)) return;
    for (const fragment of fragments) {
      if (typeof fragment === "object" && fragment !== null) this.#add(fragment);
    }
  }

  #add(fragment: ChatToolCallDelta): void {
    const id = typeof fragment.id === "string" ? fragment.id : "";
    const name = typeof fragment.function?.name === "string" ? fragment.function.name : "";
    const index = typeof fragment.index === "number" ? fragment.index : undefined;
    const slot = this.#slotFor(index, id, name) ?? this.#open(index, id);
    if (name !== "" && slot.name !== name) slot.name = slot.name === "" ? name : slot.name + name;
    const args = fragment.function?.arguments;
    if (typeof args === "string") slot.args += args;
    else if (typeof args === "object" && args !== null) slot.args = JSON.stringify(args);
  }

  #slotFor(index: number | undefined, id: string, name: string): Slot | undefined {
    // A fragment naming a tool again after a complete call starts a new one, whatever its key says.
    const fresh = (slot: Slot) => name !== "" && slot.name !== "" && isCompleteJson(slot.args);
    if (id !== "") {
      const byId = this.#last((s) => s.id === id);
      // A duplicate id at a different index is a different call.
      const sameIndex = index === undefined || byId?.index === undefined || byId.index === index;
      if (byId && sameIndex) return fresh(byId) ? undefined : byId;
    }
    if (index !== undefined) {
      const byIndex = this.#last((s) => s.index === index);
      if (!byIndex) return undefined;
      // Every call at index 0 with different ids: a new id is a new call.
      if (id !== "" && byIndex.id !== "" && byIndex.id !== id) return undefined;
      return fresh(byIndex) ? undefined : byIndex;
    }
    if (id !== "") return undefined;
    const last = this.#slots.at(-1);
    return last && !fresh(last) ? last : undefined;
  }

  #last(match: (slot: Slot) => boolean): Slot | undefined {
    for (let i = this.#slots.length - 1; i >= 0; i--) {
      const slot = this.#slots[i]!;
      if (match(slot)) return slot;
    }
    return undefined;
  }

  #open(index: number | undefined, id: string): Slot {
    const slot: Slot = { index, id, name: "", args: "" };
    this.#slots.push(slot);
    return slot;
  }

  /** Finalises every call: unique ids, `{}` for empty arguments, arguments parsed. */
  finish(): ParsedToolCall[] {
    const seen = new Set<string>();
    return this.#slots.map((slot) => {
      let id = slot.id;
      if (id === "" || seen.has(id)) id = mintToolCallId();
      seen.add(id);
      return finishCall(id, slot.name, slot.args, "native");
    });
  }
}

/** Parses a call's argument text into a {@link ParsedToolCall}. */
export function finishCall(
  id: string,
  name: string,
  rawArgs: string,
  source: ParsedToolCall["source"],
): ParsedToolCall {
  const text = rawArgs.trim() === "" ? "{}" : rawArgs;
  const call: ParsedToolCall = { id, name, arguments: text, source };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    call.argumentsError = `the arguments are not valid JSON (${error instanceof Error ? error.message : String(error)})`;
    return call;
  }
  // Some models double-encode: "{\"a\":1}".
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
      call.arguments = value === null ? text : JSON.stringify(value);
    } catch {
      // leave it: reported below as not an object
    }
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    call.input = value as Record<string, unknown>;
  } else {
    call.argumentsError = `the arguments must be a JSON object, got ${Array.isArray(value) ? "an array" : typeof value}`;
  }
  return call;
}

function isCompleteJson(text: string): boolean {
  if (text.trim() === "") return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
