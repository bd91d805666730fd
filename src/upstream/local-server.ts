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

  /** @internal Answers one request. */
  async answer(message: Message, signal: AbortSignal): Promise<unknown> {
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
        try {
          return await tool.handler((message.params?.arguments ?? {}) as Record<string, unknown>, { signal });
        } catch (error) {
          return {
            isError: true,
            content: [{ type: "text", text: error instanceof Error ? error.message : String(error) }],
          };
        }
      }
      default:
        throw { code: ErrorCode.MethodNotFound, message: `Method not found: ${message.method}` };
    }
  }
}

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
    this.#server.answer(m, controller.signal).then(
      (result) => this.#reply({ jsonrpc: "2.0", id, result } as JSONRPCMessage, id, controller),
      (error: { code?: number; message?: string }) =>
        this.#reply(
          {
            jsonrpc: "2.0",
            id,
            error: { code: error?.code ?? ErrorCode.InternalError, message: String(error?.message ?? error) },
          } as JSONRPCMessage,
          id,
          controller,
        ),
    );
    return Promise.resolve();
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
