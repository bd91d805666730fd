import { createHash } from "node:crypto";
import { generateSync, type JsonSchema } from "json-schema-faker";
import type { RecordedHandshake, RecordedLists } from "./recording-format.js";
import { withoutMeta } from "./recording-format.js";
import type { Exchange, Lookup } from "./replay-book.js";

/** Options of a {@link ToolSimulator}. */
export interface ToolSimulatorOptions {
  /** The server's name (its serverInfo becomes `NAME (simulated)`). */
  server: string;
  /** The tools the server listed when it ran for real. */
  tools: readonly Record<string, unknown>[];
  /** Same seed, same results. Default 1. */
  seed?: number;
  /** How the real server introduced itself, when known. */
  serverInfo?: RecordedHandshake["serverInfo"];
}

/** Progress steps sent to a call that asked for progress, `STEP_MS` apart at speed 1. */
const PROGRESS_STEPS = 3;
const STEP_MS = 20;

/**
 * A stand-in for a server known only by its tool list: `tools/call` answers with values made from
 * the tool's `outputSchema` (as `structuredContent` and as JSON text), or with plain text when it
 * has none; a call that sends a `progressToken` gets progress first. Results depend only on the
 * seed, the tool and the arguments, so the same call gives the same answer in any order.
 *
 * Values come from json-schema-faker (types, enums, required, bounds, formats, `$ref`), seeded per
 * call; it produces values that validate against the schema, which a small generator of our own
 * would have to prove keyword by keyword.
 */
export class ToolSimulator {
  readonly handshake: RecordedHandshake;
  readonly lists: RecordedLists;
  readonly #tools = new Map<string, Record<string, unknown>>();
  readonly #seed: number;

  constructor(options: ToolSimulatorOptions) {
    this.#seed = options.seed ?? 1;
    for (const tool of options.tools) if (typeof tool.name === "string") this.#tools.set(tool.name, tool);
    const real = options.serverInfo;
    this.handshake = {
      protocolVersion: "2025-11-25",
      serverInfo: { name: `${real?.name ?? options.server} (simulated)`, version: real?.version ?? "0.0.0" },
      capabilities: { tools: {} },
      instructions: `A simulation of ${options.server} built from its tool list: results are made up.`,
    };
    this.lists = { tools: [...options.tools], resources: [], resourceTemplates: [], prompts: [] };
  }

  /** The simulated answer to a request. */
  lookup(method: string, params: Record<string, unknown> | undefined): Lookup {
    if (method !== "tools/call")
      return { found: false, reason: `a server simulated from its tool list answers tools/call only` };
    const name = String(params?.name);
    const tool = this.#tools.get(name);
    if (tool === undefined) {
      const names = [...this.#tools.keys()];
      return {
        found: false,
        reason: `the tool list has no tool "${name}"`,
        ...(names.length === 0 ? {} : { closest: { method, params: { name: nearest(name, names) } } }),
      };
    }
    const args = params?.arguments ?? {};
    const seed = seedOf(this.#seed, name, args);
    const result = this.result(tool, seed);
    const events: Exchange["events"] = [];
    const meta = params?._meta as { progressToken?: unknown } | undefined;
    if (meta?.progressToken !== undefined)
      for (let step = 1; step <= PROGRESS_STEPS; step++)
        events.push({
          kind: "progress",
          ms: step * STEP_MS,
          progress: step,
          total: PROGRESS_STEPS,
          message: `simulated step ${step} of ${PROGRESS_STEPS}`,
        });
    return {
      found: true,
      exchange: {
        method,
        params: params ?? {},
        events,
        answer: { ms: (events.length + 1) * STEP_MS, result },
      },
    };
  }

  /** A result for `tool` made from `seed`. */
  result(tool: Record<string, unknown>, seed: number): Record<string, unknown> {
    const schema = tool.outputSchema as JsonSchema | undefined;
    if (schema !== undefined) {
      const structured = generateSync(schema, { seed, optionalsProbability: 0.5, maxItems: 3 });
      return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
    }
    return { content: [{ type: "text", text: sentence(String(tool.name), seed) }] };
  }
}

/** A 31-bit seed from the simulator's seed, the tool and its arguments (in any key order). */
function seedOf(seed: number, name: string, args: unknown): number {
  const digest = createHash("sha256")
    .update(`${seed}\0${name}\0${JSON.stringify(withoutMeta(args))}`)
    .digest();
  return digest.readUInt32BE(0) & 0x7fffffff;
}

const WORDS = ["alpha", "bravo", "delta", "echo", "lima", "nova", "orbit", "quartz", "sierra", "tango"];

/** Plain text for a tool without an output schema: says it is simulated, then a few seeded words. */
function sentence(name: string, seed: number): string {
  let state = seed || 1;
  const words: string[] = [];
  for (let i = 0; i < 6; i++) {
    // xorshift32: enough to pick words reproducibly.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    words.push(WORDS[(state >>> 0) % WORDS.length]!);
  }
  return `Simulated result of ${name}: ${words.join(" ")}`;
}

/** The name in `names` sharing the longest prefix with `name` (a hint, not a guess at intent). */
function nearest(name: string, names: readonly string[]): string {
  let best = names[0]!;
  let bestLength = -1;
  for (const candidate of names) {
    let length = 0;
    while (length < name.length && name[length] === candidate[length]) length++;
    if (length > bestLength) {
      best = candidate;
      bestLength = length;
    }
  }
  return best;
}
