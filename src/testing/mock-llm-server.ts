/**
 * A local OpenAI-compatible chat-completions server over real HTTP, for tests and demos:
 * scripted turns, exact chunk sequences, provider quirks, provider error bodies, chunk
 * boundaries anywhere (inside UTF-8 characters and JSON strings), slow streams, and a
 * record of every request it received.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type { ChatCompletionRequest } from "../agent/chat-types.js";
import { type ChunkMeta, type MockReply, replyToChunks, replyToCompletion } from "./mock-llm-chunks.js";

/** How bytes go out on the wire. */
export interface MockWireOptions {
  /** Write the SSE body in slices of this many bytes (1 splits inside every character). */
  chunkSize?: number;
  /** Wait this long between writes: a slow stream. */
  delayMs?: number;
  /** Put `: keep-alive` comment lines between events. */
  comments?: boolean;
}

/** A request the mock received. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (or undefined when it was not JSON). */
  body: ChatCompletionRequest;
  rawBody: string;
}

/** One scripted answer: a reply, exact chunks, a raw SSE body, an error, a broken stream, or a function of the request. */
export type MockTurn =
  | ((MockReply | { chunks: unknown[] } | { sse: string }) & { wire?: MockWireOptions })
  | { error: { status: number; body: unknown; headers?: Record<string, string> } }
  | { midStreamError: unknown; text?: string; wire?: MockWireOptions }
  | { truncate: true; text?: string; wire?: MockWireOptions }
  | ((request: RecordedRequest) => MockTurn);

/** Options of {@link startMockLlmServer}. */
export interface MockLlmServerOptions {
  turns?: MockTurn[];
  /** Answers requests once the scripted turns are used up. Default: a 500 naming the request. */
  fallback?: MockTurn;
  /** Wire options for every streamed turn (a turn's own `wire` wins). */
  wire?: MockWireOptions;
  /** When set, requests must carry `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  port?: number;
  host?: string;
}

/** A running mock server. */
export interface MockLlmServer {
  /** Base URL including `/v1`, ready for `llm.baseUrl`. */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Adds turns to the script. */
  enqueue(...turns: MockTurn[]): void;
  /** Stops the server and drops open connections. */
  close(): Promise<void>;
}

/**
 * Starts the mock on a free port.
 *
 * @example
 * const llm = await startMockLlmServer({ turns: [{ toolCalls: [{ name: "echo", arguments: { message: "hi" } }] }, { text: "Done." }] });
 * const run = runAgent({ hub, llm: { baseUrl: llm.url, model: "mock" }, messages });
 */
export async function startMockLlmServer(options: MockLlmServerOptions = {}): Promise<MockLlmServer> {
  const queue: MockTurn[] = [...(options.turns ?? [])];
  const requests: RecordedRequest[] = [];
  let counter = 0;

  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      const rawBody = Buffer.concat(parts).toString("utf8");
      let body: ChatCompletionRequest;
      try {
        body = JSON.parse(rawBody) as ChatCompletionRequest;
      } catch {
        body = undefined as unknown as ChatCompletionRequest;
      }
      const path = (req.url ?? "/").split("?")[0]!;
      const recorded: RecordedRequest = {
        method: req.method ?? "GET",
        path,
        headers: req.headers,
        body,
        rawBody,
      };
      if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
        return sendJson(res, 401, {
          error: {
            message: "Incorrect API key provided",
            type: "invalid_request_error",
            param: null,
            code: "invalid_api_key",
          },
        });
      }
      if (req.method === "GET" && path.endsWith("/models")) {
        return sendJson(res, 200, {
          object: "list",
          data: [{ id: "mock", object: "model", owned_by: "mcplex" }],
        });
      }
      if (req.method !== "POST" || !path.endsWith("/chat/completions")) {
        return sendJson(res, 404, {
          error: { message: `Unknown route ${req.method} ${path}`, type: "invalid_request_error" },
        });
      }
      requests.push(recorded);
      counter++;
      let turn = queue.shift() ?? options.fallback;
      while (typeof turn === "function") turn = turn(recorded);
      const meta: ChunkMeta = {
        id: `chatcmpl-mock-${counter}`,
        model: typeof body?.model === "string" ? body.model : "mock",
        created: Math.floor(Date.now() / 1000),
        includeUsage: body?.stream_options?.include_usage === true,
      };
      answer(res, turn, body, meta, options.wire ?? {}).catch(() => res.destroy());
    });
  });

  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve),
  );
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? "127.0.0.1";
  return {
    url: `http://${host}:${port}/v1`,
    requests,
    enqueue: (...turns) => {
      queue.push(...turns);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function answer(
  res: ServerResponse,
  turn: Exclude<MockTurn, (request: RecordedRequest) => MockTurn> | undefined,
  body: ChatCompletionRequest | undefined,
  meta: ChunkMeta,
  serverWire: MockWireOptions,
): Promise<void> {
  if (turn === undefined) {
    return sendJson(res, 500, {
      error: { message: `mock-llm: no scripted turn left for request ${meta.id}`, type: "mock_error" },
    });
  }
  if ("error" in turn) return sendJson(res, turn.error.status, turn.error.body, turn.error.headers);
  const wire = { ...serverWire, ...("wire" in turn ? turn.wire : {}) };
  const streaming = body?.stream === true;
  const event = (data: unknown) => `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
  const textReply = (text: string | undefined) =>
    replyToChunks({ text: text ?? "", usage: false }, { ...meta, includeUsage: false });

  if (
    !streaming &&
    !("sse" in turn) &&
    !("chunks" in turn) &&
    !("midStreamError" in turn) &&
    !("truncate" in turn)
  ) {
    return sendJson(res, 200, replyToCompletion(turn, meta));
  }
  let events: string[];
  if ("sse" in turn) events = [turn.sse];
  else if ("chunks" in turn) events = [...turn.chunks.map(event), event("[DONE]")];
  else if ("midStreamError" in turn) {
    events = [...textReply(turn.text).slice(0, -1).map(event), event(turn.midStreamError)];
  } else if ("truncate" in turn) {
    events = textReply(turn.text).slice(0, -1).map(event);
  } else {
    events = replyToChunks(turn, meta).map(event);
    if (turn.quirk !== "no-done") events.push(event("[DONE]"));
  }
  if (wire.comments) events = events.flatMap((e) => [": keep-alive\n\n", e]);
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  await writeSlowly(res, events, wire);
  res.end();
}

/** Writes byte slices of `chunkSize`, or one event per write when a delay is set, or all at once. */
async function writeSlowly(res: ServerResponse, events: string[], wire: MockWireOptions): Promise<void> {
  const bytes = Buffer.from(events.join(""), "utf8");
  const slices: Buffer[] = [];
  if (wire.chunkSize && wire.chunkSize > 0) {
    for (let offset = 0; offset < bytes.length; offset += wire.chunkSize) {
      slices.push(bytes.subarray(offset, offset + wire.chunkSize));
    }
  } else if (wire.delayMs) {
    for (const event of events) slices.push(Buffer.from(event, "utf8"));
  } else {
    slices.push(bytes);
  }
  for (const slice of slices) {
    if (res.destroyed) return;
    // Wait for each slice to be flushed, so slices reach the client as separate reads where the OS allows.
    await new Promise<void>((resolve) => res.write(slice, () => resolve()));
    if (wire.delayMs) await sleep(wire.delayMs);
  }
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}
