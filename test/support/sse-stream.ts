import { type IncomingMessage, request } from "node:http";

/** A GET /sse read by hand (raw helpers for the gateway's HTTP+SSE transport): its `endpoint`, then each `message`, as they arrive. */
export interface RawStream {
  status: number;
  endpoint: Promise<string>;
  next(): Promise<Record<string, unknown>>;
  close(): void;
}

/**
 * Opens the gateway's 2024-11-05 HTTP+SSE stream with `node:http`; rejects unless it answers 200.
 * `close()` drops the connection, which ends the session.
 */
export function openStream(url: string, headers: Record<string, string> = {}): Promise<RawStream> {
  return new Promise((done, fail) => {
    const req = request(
      url,
      { headers: { accept: "text/event-stream", ...headers } },
      (res: IncomingMessage) => {
        let buffer = "";
        let endpointFound: (e: string) => void = () => {};
        const endpoint = new Promise<string>((found) => {
          endpointFound = found;
        });
        const queue: Record<string, unknown>[] = [];
        const waiting: Array<(m: Record<string, unknown>) => void> = [];
        res.setEncoding("utf8").on("data", (chunk: string) => {
          buffer += chunk;
          for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = /^event: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1] ?? "";
            if (event === "endpoint") endpointFound(data);
            else if (event === "message") {
              const message = JSON.parse(data) as Record<string, unknown>;
              const wake = waiting.shift();
              if (wake !== undefined) wake(message);
              else queue.push(message);
            }
          }
        });
        done({
          status: res.statusCode ?? 0,
          endpoint,
          next: () => {
            const queued = queue.shift();
            return queued !== undefined ? Promise.resolve(queued) : new Promise((wake) => waiting.push(wake));
          },
          close: () => req.destroy(),
        });
      },
    );
    req.on("error", fail);
    req.end();
  });
}

/**
 * Opens a stream and runs the `initialize` handshake on it at `protocolVersion`; resolves with
 * the stream and a `post` that sends one message to its session (202 expected).
 */
export async function sseSession(
  origin: string,
  protocolVersion: string,
): Promise<{ stream: RawStream; post(message: object): Promise<number> }> {
  const stream = await openStream(`${origin}/sse`);
  const endpoint = new URL(await stream.endpoint, origin).href;
  const post = async (message: object) => {
    const res = await fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(message),
    });
    await res.text();
    return res.status;
  };
  await post({
    jsonrpc: "2.0",
    id: "init",
    method: "initialize",
    params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw-sse", version: "1" } },
  });
  await stream.next();
  await post({ jsonrpc: "2.0", method: "notifications/initialized" });
  return { stream, post };
}

/** A POST answered with an event stream (a 2026 `subscriptions/listen`), read as it comes. */
export interface PostedStream {
  status: number;
  /** The whole body when the answer is not a stream (a refusal). */
  body: Promise<string>;
  /** The next JSON-RPC message of the stream. */
  next(): Promise<Record<string, unknown>>;
  close(): void;
}

/**
 * POSTs `message` with `node:http` and reads the answer's `message` events one by one as they
 * arrive (the stream may never end); `close()` drops the connection, which cancels the request.
 */
export function postStream(
  url: string,
  message: object,
  headers: Record<string, string>,
): Promise<PostedStream> {
  return new Promise((done, fail) => {
    const req = request(url, { method: "POST", headers }, (res: IncomingMessage) => {
      let buffer = "";
      let all = "";
      const queue: Record<string, unknown>[] = [];
      const waiting: Array<(m: Record<string, unknown>) => void> = [];
      const body = new Promise<string>((ended) => res.once("end", () => ended(all)));
      res.setEncoding("utf8").on("data", (chunk: string) => {
        all += chunk;
        buffer += chunk;
        for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (data === undefined) continue;
          const parsed = JSON.parse(data) as Record<string, unknown>;
          const wake = waiting.shift();
          if (wake !== undefined) wake(parsed);
          else queue.push(parsed);
        }
      });
      done({
        status: res.statusCode ?? 0,
        body,
        next: () => {
          const queued = queue.shift();
          return queued !== undefined ? Promise.resolve(queued) : new Promise((wake) => waiting.push(wake));
        },
        close: () => req.destroy(),
      });
    });
    req.on("error", fail);
    req.end(JSON.stringify(message));
  });
}
