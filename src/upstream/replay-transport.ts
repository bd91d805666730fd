import { setTimeout as sleep } from "node:timers/promises";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { ErrorCode } from "../protocol/error-codes.js";
import { REV2025_PROTOCOL_VERSIONS } from "../protocol/rev2025.js";
import type { RecordedHandshake, RecordedLists } from "../recording/recording-format.js";
import type { Exchange, Lookup } from "../recording/replay-book.js";

/** Where a {@link ReplayTransport} gets its answers: a recording or a simulator. */
export interface ReplaySource {
  readonly handshake: RecordedHandshake;
  readonly lists: RecordedLists;
  lookup(method: string, params: Record<string, unknown> | undefined): Lookup;
}

/** Options of a {@link ReplayTransport}. */
export interface ReplayTransportOptions {
  source: ReplaySource;
  /** The configured server's name, for error messages. */
  server: string;
  /** Recorded time is divided by this; 0 answers as fast as possible. Default 1. */
  speed?: number;
}

/** The `_meta` key that marks every result of a replayed or simulated server. */
export const SIMULATED_META = "mcplex/simulated";

/** Requests every server answers alike, whatever was recorded. */
const EMPTY_ANSWERS = new Set(["ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"]);

const LISTS: Record<string, keyof RecordedLists> = {
  "tools/list": "tools",
  "resources/list": "resources",
  "resources/templates/list": "resourceTemplates",
  "prompts/list": "prompts",
};

type Request = { id: string | number; method: string; params?: Record<string, unknown> };

/**
 * A fake server behind the SDK `Transport` seam: it answers the handshake and the lists from a
 * recording (or a simulator) and every other request with the recorded answer, replaying the
 * progress and notifications that came during it at their recorded pace. The hub runs over it
 * unchanged. It speaks the 2025 handshake (`server/discover` is refused, so negotiation falls back
 * to `initialize`) whatever revision was recorded: the recorded answers are the same either way.
 * Every result carries `_meta["mcplex/simulated"]: true`. Timers are unref'd and end with the
 * request's cancellation or `close()`.
 */
export class ReplayTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  readonly #options: ReplayTransportOptions;
  readonly #closing = new AbortController();
  /** Requests being answered, by id, to cancel their timers. */
  readonly #inFlight = new Map<string | number, AbortController>();
  #started = false;

  constructor(options: ReplayTransportOptions) {
    this.#options = options;
  }

  async start(): Promise<void> {
    this.#started = true;
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.#started || this.#closing.signal.aborted) throw new Error("not connected");
    const m = message as { id?: string | number; method?: string; params?: Record<string, unknown> };
    if (m.method === undefined) return; // an answer to a server request: none are replayed
    if (m.id === undefined) {
      if (m.method === "notifications/cancelled") this.#inFlight.get(m.params?.requestId as string)?.abort();
      return;
    }
    const request = m as Request;
    const controller = new AbortController();
    this.#inFlight.set(request.id, controller);
    const signal = AbortSignal.any([controller.signal, this.#closing.signal]);
    void this.#answer(request, signal)
      .catch((error: unknown) => {
        if (!signal.aborted) this.onerror?.(error as Error);
      })
      .finally(() => this.#inFlight.delete(request.id));
  }

  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    this.onclose?.();
  }

  async #answer(request: Request, signal: AbortSignal): Promise<void> {
    // Never answer inside send(): the caller registers the request after sending it.
    await sleep(0, undefined, { signal, ref: false });
    const { source } = this.#options;
    const { method, params } = request;
    if (method === "initialize") return this.#reply(request.id, this.#initialize(params));
    if (method === "server/discover")
      return this.#fail(request.id, ErrorCode.MethodNotFound, `Method not found: ${method}`);
    if (EMPTY_ANSWERS.has(method)) return this.#reply(request.id, {});
    const list = LISTS[method];
    if (list !== undefined) return this.#reply(request.id, this.#marked({ [list]: source.lists[list] }));
    const found = source.lookup(method, params);
    if (!found.found) {
      const closest =
        found.closest === undefined
          ? "it has no request to offer instead"
          : `the closest recorded request is ${found.closest.method} ${JSON.stringify(found.closest.params)}`;
      return this.#fail(
        request.id,
        ErrorCode.InvalidParams,
        `${this.#options.server} (replayed): no recorded answer to ${method} ${JSON.stringify(params ?? {})}: ${found.reason}; ${closest}`,
        found.closest === undefined ? undefined : { closest: found.closest },
      );
    }
    await this.#play(request, found.exchange, signal);
  }

  /** Sends the exchange's progress, notifications and answer at their recorded times. */
  async #play(request: Request, exchange: Exchange, signal: AbortSignal): Promise<void> {
    const speed = this.#options.speed ?? 1;
    const token = (request.params?._meta as { progressToken?: unknown } | undefined)?.progressToken;
    let elapsed = 0;
    const waitUntil = async (ms: number) => {
      const delay = speed === 0 ? 0 : Math.max(0, ms - elapsed) / speed;
      elapsed = Math.max(elapsed, ms);
      if (delay > 0) await sleep(delay, undefined, { signal, ref: false });
      signal.throwIfAborted();
    };
    for (const event of exchange.events) {
      if (event.kind === "progress" && token === undefined) continue;
      await waitUntil(event.ms);
      if (event.kind === "progress") {
        const { kind: _, ms: __, ...progress } = event;
        this.#deliver({
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { ...progress, progressToken: token },
        });
      } else
        this.#deliver({
          jsonrpc: "2.0",
          method: event.method,
          ...(event.params === undefined ? {} : { params: event.params }),
        });
    }
    const answer = exchange.answer!;
    await waitUntil(answer.ms);
    if ("result" in answer) return this.#reply(request.id, this.#marked(answer.result));
    const { code, message, data } = answer.error;
    this.#fail(request.id, code ?? ErrorCode.InternalError, message, data);
  }

  #initialize(params: Record<string, unknown> | undefined): Record<string, unknown> {
    const { handshake } = this.#options.source;
    const recorded = handshake.protocolVersion;
    const asked = typeof params?.protocolVersion === "string" ? params.protocolVersion : undefined;
    const speaks = (version: string | undefined) =>
      version !== undefined && (REV2025_PROTOCOL_VERSIONS as readonly string[]).includes(version);
    const protocolVersion = speaks(recorded)
      ? recorded
      : speaks(asked)
        ? asked
        : REV2025_PROTOCOL_VERSIONS[0];
    return {
      protocolVersion,
      capabilities: handshake.capabilities ?? {},
      serverInfo: handshake.serverInfo ?? { name: this.#options.server, version: "0.0.0" },
      ...(handshake.instructions === undefined ? {} : { instructions: handshake.instructions }),
    };
  }

  #marked(result: unknown): unknown {
    if (result === null || typeof result !== "object" || Array.isArray(result)) return result;
    const meta = (result as { _meta?: Record<string, unknown> })._meta;
    return { ...result, _meta: { ...meta, [SIMULATED_META]: true } };
  }

  #reply(id: string | number, result: unknown): void {
    this.#deliver({ jsonrpc: "2.0", id, result } as JSONRPCMessage);
  }

  #fail(id: string | number, code: number, message: string, data?: unknown): void {
    this.#deliver({
      jsonrpc: "2.0",
      id,
      error: { code, message, ...(data === undefined ? {} : { data }) },
    } as JSONRPCMessage);
  }

  #deliver(message: JSONRPCMessage): void {
    if (!this.#closing.signal.aborted) this.onmessage?.(message);
  }
}
