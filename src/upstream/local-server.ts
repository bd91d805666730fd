import type { CallToolResult, JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { ControllerPool } from "../protocol/controller-pool.js";
import { ErrorCode } from "../protocol/error-codes.js";

/** A tool implemented by a function in this process. */
export interface LocalTool {
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  handler(
    args: Record<string, unknown>,
    context: { signal: AbortSignal },
  ): CallToolResult | Promise<CallToolResult>;
}

type Message = { id?: string | number; method?: string; params?: Record<string, unknown> };

/**
 * Tools that are plain functions of the application, served in process as an MCP
 * server (2025 handshake, tools only) so that they join the catalog like any other
 * server: `{ name: "app", transport: "local", server: new LocalServer("app", tools) }`.
 * Messages are passed as objects, with no serialisation.
 */
export class LocalServer {
  readonly name: string;
  readonly #tools: Map<string, LocalTool>;

  constructor(name: string, tools: readonly LocalTool[]) {
    this.name = name;
    this.#tools = new Map(tools.map((t) => [t.name, t]));
  }

  /** A new connection to this server. */
  connect(): Transport {
    return new LocalTransport(this);
  }

  /**
   * @internal Answers one request: the result itself when it is at hand (every method, and a
   * tool whose handler returns no promise), else a promise of it. Throws (or rejects with) a
   * wire error `{ code, message }`. Not async: an async function and its await were two
   * microtask turns and a promise on every in-process call.
   */
  answer(message: Message, signal: AbortSignal): unknown {
    switch (message.method) {
      case "initialize":
        return {
          protocolVersion: message.params?.protocolVersion ?? "2025-11-25",
          capabilities: { tools: {} },
          serverInfo: { name: this.name, version: "local" },
        };
      case "ping":
        return {};
      case "tools/list":
        return {
          tools: [...this.#tools.values()].map((t) => ({
            name: t.name,
            ...(t.description === undefined ? {} : { description: t.description }),
            inputSchema: t.inputSchema ?? { type: "object" },
          })),
        };
      case "tools/call": {
        const tool = this.#tools.get(String(message.params?.name));
        if (tool === undefined)
          throw { code: ErrorCode.InvalidParams, message: `Unknown tool: ${String(message.params?.name)}` };
        let result: CallToolResult | Promise<CallToolResult>;
        try {
          result = tool.handler((message.params?.arguments ?? {}) as Record<string, unknown>, { signal });
        } catch (error) {
          return toolError(error);
        }
        return isThenable(result) ? Promise.resolve(result).catch(toolError) : result;
      }
      default:
        throw { code: ErrorCode.MethodNotFound, message: `Method not found: ${message.method}` };
    }
  }
}

/** A handler's failure, as the tool error result its caller gets. */
function toolError(error: unknown): CallToolResult {
  return {
    isError: true,
    content: [{ type: "text", text: error instanceof Error ? error.message : String(error) }],
  };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

/** Settled already: an answer at hand is delivered on its `then`, one microtask turn later. */
const RESOLVED = Promise.resolve();

/**
 * Controllers of the calls in flight, kept for reuse: a new AbortController for every call was
 * the largest single cost of an in-process call. A tool handler's listener left on its signal
 * keeps that controller out of the pool.
 */
const controllers = new ControllerPool(256);

class LocalTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  readonly #server: LocalServer;
  readonly #inflight = new Map<string | number, AbortController>();
  #closed = false;

  constructor(server: LocalServer) {
    this.#server = server;
  }

  async start(): Promise<void> {}

  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("not connected"));
    const m = message as Message;
    if (m.method === undefined) return Promise.resolve();
    if (m.id === undefined) {
      if (m.method === "notifications/cancelled")
        this.#inflight.get(m.params?.requestId as string | number)?.abort();
      return Promise.resolve();
    }
    const id = m.id;
    const controller = controllers.take();
    this.#inflight.set(id, controller);
    let answer: unknown;
    try {
      answer = this.#server.answer(m, controller.signal);
    } catch (error) {
      answer = Promise.reject(error);
    }
    if (isThenable(answer)) {
      answer.then(
        (result) => this.#reply({ jsonrpc: "2.0", id, result } as JSONRPCMessage, id, controller),
        (error: { code?: number; message?: string }) =>
          this.#reply(
            {
              jsonrpc: "2.0",
              id,
              error: {
                code: error?.code ?? ErrorCode.InternalError,
                message: String(error?.message ?? error),
              },
            } as JSONRPCMessage,
            id,
            controller,
          ),
      );
    } else {
      // Never from inside `send`: the caller may not be ready for its answer until `send` returns.
      RESOLVED.then(() =>
        this.#reply({ jsonrpc: "2.0", id, result: answer } as JSONRPCMessage, id, controller),
      );
    }
    return RESOLVED;
  }

  #reply(message: JSONRPCMessage, id: string | number, controller: AbortController): void {
    this.#inflight.delete(id);
    controllers.giveIfUnheard(controller);
    if (!this.#closed) this.onmessage?.(message);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const controller of this.#inflight.values()) controller.abort();
    this.onclose?.();
  }
}
