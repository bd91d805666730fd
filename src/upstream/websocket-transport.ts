import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import WebSocket from "ws";
import { McplexError } from "../errors.js";
import { DEFAULT_MAX_QUEUED_BYTES, fitsQueue } from "../protocol/write-queue.js";
import { UpgradeRefusedError } from "./upgrade-failure.js";
import { queueFull } from "./upstream-errors.js";

/** Options of a {@link WebSocketClientTransport}. */
export interface WebSocketClientOptions {
  url: string;
  headers?: Record<string, string>;
  /** Server name for error messages. */
  server?: string;
  /** Largest accepted message in bytes. Default 64 MiB. */
  maxPayload?: number;
  /**
   * Bytes that may wait in the socket for the server to read; past that, large messages
   * are refused with a "queue full" error. Default 32 MiB.
   */
  maxQueuedBytes?: number;
}

/**
 * MCP over WebSocket (`ws://`, `wss://`), subprotocol `mcp`: one JSON-RPC message
 * per text frame. Implements the SDK's `Transport`.
 */
export class WebSocketClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  readonly #options: WebSocketClientOptions;
  #socket: WebSocket | undefined;
  #closed = false;

  constructor(options: WebSocketClientOptions) {
    this.#options = options;
  }

  start(): Promise<void> {
    const { url, headers, server = url, maxPayload = 64 * 1024 * 1024 } = this.#options;
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, "mcp", { headers, maxPayload });
      this.#socket = socket;
      let opened = false;
      socket.once("open", () => {
        opened = true;
        resolve();
      });
      socket.on("unexpected-response", (_request, response) => {
        const status = response.statusCode ?? 0;
        const refusal = new UpgradeRefusedError(status, response.statusMessage ?? "");
        const error = new McplexError(
          "UPSTREAM_START_FAILED",
          `${server}: WebSocket upgrade refused with HTTP ${status}`,
          { server, transport: "websocket" },
          { cause: refusal },
        );
        response.resume();
        socket.terminate();
        reject(error);
      });
      socket.on("error", (error) => {
        if (!opened) {
          reject(
            new McplexError(
              "UPSTREAM_START_FAILED",
              `${server}: could not connect to ${url}: ${error.message}`,
              { server, transport: "websocket" },
              { cause: error },
            ),
          );
        } else {
          this.onerror?.(error);
        }
      });
      socket.on("message", (data, isBinary) => {
        let message: unknown;
        try {
          message = JSON.parse(isBinary ? Buffer.from(data as Buffer).toString("utf8") : data.toString());
        } catch (error) {
          this.onerror?.(new Error(`invalid JSON from ${server}: ${(error as Error).message}`));
          return;
        }
        this.onmessage?.(message as JSONRPCMessage);
      });
      socket.on("close", () => {
        if (this.#closed) return;
        this.#closed = true;
        this.onclose?.();
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const socket = this.#socket;
    if (socket === undefined || socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(new Error("not connected"));
    }
    const text = JSON.stringify(message);
    // `ws` buffers whatever the socket cannot take yet, without limit: the limit is ours.
    const limit = this.#options.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
    if (!fitsQueue(socket.bufferedAmount, text.length, limit)) {
      const server = this.#options.server ?? this.#options.url;
      return Promise.reject(queueFull(server, "websocket", socket.bufferedAmount, text.length, limit));
    }
    socket.send(text);
    return Promise.resolve();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const socket = this.#socket;
    if (socket !== undefined && socket.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        socket.once("close", () => resolve());
        socket.close(1000);
        setTimeout(() => socket.terminate(), 1000).unref();
      });
    }
    this.onclose?.();
  }
}
