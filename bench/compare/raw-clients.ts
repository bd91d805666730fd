/**
 * The one raw client every target meets: newline JSON over a child's stdio, or plain POSTs of
 * JSON-RPC over kept-alive HTTP connections (answers in JSON or in SSE, whichever the target
 * sends). No SDK on the client side, so that what is measured is the target.
 */
import type { ChildProcess } from "node:child_process";
import { RawHttpPool, type RawResponse } from "./raw-http.js";

/** The protocol revision every target is asked for: the 2025 one all the peers speak. */
export const PROTOCOL = "2025-06-18";

export interface Connection {
  /** Sends a request; resolves with its result, rejects with its error. */
  request(method: string, params?: unknown): Promise<unknown>;
  notify(method: string): Promise<void>;
  close(): void;
}

interface Answer {
  id?: number;
  result?: unknown;
  error?: { message?: string };
}

type Pending = Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>;

function settle(pending: Pending, m: Answer): void {
  if (m.id === undefined) return;
  const waiter = pending.get(m.id);
  pending.delete(m.id);
  if (m.error !== undefined)
    waiter?.reject(new Error(`error answer: ${JSON.stringify(m.error).slice(0, 200)}`));
  else waiter?.resolve(m.result);
}

/** A connection over `child`'s stdin and stdout (newline-delimited JSON-RPC). */
export function stdioConnection(child: ChildProcess, describe: () => string): Connection {
  const pending: Pending = new Map();
  let buffer = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    let start = 0;
    for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n", start)) {
      const line = buffer.slice(start, nl);
      start = nl + 1;
      if (line.trim() !== "") settle(pending, JSON.parse(line) as Answer);
    }
    buffer = buffer.slice(start);
  });
  let gone: Error | undefined;
  child.once("exit", (code) => {
    gone = new Error(`exited with ${code}: ${describe()}`);
    for (const w of pending.values()) w.reject(gone);
    pending.clear();
  });
  child.stdin!.on("error", () => {}); // A target that died: its exit rejects what waits.
  let id = 0;
  const write = (m: object) => child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", ...m })}\n`);
  return {
    request: (method, params) =>
      new Promise((resolve, reject) => {
        if (gone !== undefined) return reject(gone);
        const n = ++id;
        pending.set(n, { resolve, reject });
        write({ id: n, method, params });
      }),
    notify: async (method) => void write({ method }),
    close: () => child.stdin!.end(),
  };
}

/** The JSON-RPC message in an answer's body: the body itself, or the SSE event's data carrying `id`. */
function parseBody(text: string, contentType: string, id: number): Answer {
  if (!contentType.startsWith("text/event-stream")) return JSON.parse(text) as Answer;
  for (const line of text.split("\n")) {
    if (!line.startsWith("data:")) continue;
    const m = JSON.parse(line.slice(5)) as Answer;
    if (m.id === id) return m;
  }
  throw new Error(`no answer to ${id} in the event stream: ${text.slice(0, 200)}`);
}

/**
 * A connection to a Streamable HTTP endpoint, with up to `sockets` kept-alive connections
 * (raw-http.ts); `headers` go with every POST (an `authorization` for a front that signs its
 * callers in).
 */
export function httpConnection(
  url: URL,
  sockets: number,
  headers: Readonly<Record<string, string>> = {},
): Connection & { sessionId?: string } {
  const pool = new RawHttpPool(url, sockets);
  let id = 0;
  const self: Connection & { sessionId?: string } = {
    request: (method, params) => post(self, pool, headers, { id: ++id, method, params }),
    notify: async (method) => void (await post(self, pool, headers, { method })),
    close: () => pool.close(),
  };
  return self;
}

/**
 * POSTs `m`. A request sent on a kept-alive socket the server was closing at that moment (its
 * idle timeout, which a loaded machine makes the client see late) is sent once more on a new
 * socket: that race is the client's, not the target's.
 */
async function post(
  session: { sessionId?: string },
  pool: RawHttpPool,
  extra: Readonly<Record<string, string>>,
  m: { id?: number; method: string; params?: unknown },
): Promise<unknown> {
  const body = JSON.stringify({ jsonrpc: "2.0", ...m });
  const headers: Record<string, string> = {
    ...extra,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": PROTOCOL,
  };
  if (session.sessionId !== undefined) headers["mcp-session-id"] = session.sessionId;
  let res: RawResponse;
  try {
    res = await pool.post(body, headers);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ECONNRESET") throw error;
    res = await pool.post(body, headers);
  }
  const sid = res.headers.get("mcp-session-id");
  if (sid !== undefined) session.sessionId = sid;
  if (res.status !== 200 && res.status !== 202)
    throw new Error(`HTTP ${res.status}: ${res.body.slice(0, 200)}`);
  if (m.id === undefined) return undefined;
  const answer = parseBody(res.body, res.headers.get("content-type") ?? "", m.id);
  if (answer.error !== undefined) throw new Error(`error answer: ${JSON.stringify(answer.error)}`);
  return answer.result;
}

/** The handshake every target gets: initialize, then the initialized notification. */
export async function handshake(c: Connection): Promise<void> {
  await c.request("initialize", {
    protocolVersion: PROTOCOL,
    capabilities: {},
    clientInfo: { name: "bench-compare", version: "1" },
  });
  await c.notify("notifications/initialized");
}

/** One echo call; throws unless the answer carries the message back. */
export async function echoCall(c: Connection, message = "hi"): Promise<void> {
  const result = (await c.request("tools/call", { name: "echo", arguments: { message } })) as {
    content?: { text?: string }[];
  };
  if (result?.content?.[0]?.text !== message)
    throw new Error(`no echo in ${JSON.stringify(result).slice(0, 200)}`);
}
