import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import {
  type AddressInfo,
  createServer as createNetServer,
  type Server as NetServer,
  type Socket,
} from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AnswerError, AnswerReader } from "../../src/cluster/answer-reader.js";
import { type LinkHandler, ReplicaLink } from "../../src/cluster/replica-link.js";

// The replica-to-replica HTTP client against real node:http servers (what a replica runs) and
// raw TCP servers (for answers node:http would not write), on loopback.

interface Answer {
  status?: number;
  headers: Record<string, string>;
  chunks: Buffer[];
  ended: boolean;
  failed?: { error: Error; sent: boolean };
}

/** Sends one request; resolves once it ended or failed. `onData` sees each chunk as it comes. */
function send(
  link: ReplicaLink,
  origin: string,
  request: { method?: string; path?: string; headers?: Record<string, string>; body?: string },
  onData?: (chunk: Buffer) => boolean | undefined,
): { done: Promise<Answer>; abort: () => void; resume: () => void } {
  const answer: Answer = { headers: {}, chunks: [], ended: false };
  let control = { abort: () => {}, resume: () => {} };
  const done = new Promise<Answer>((resolve) => {
    const handler: LinkHandler = {
      head(status, headers) {
        answer.status = status;
        for (let i = 0; i < headers.length; i += 2) answer.headers[headers[i]!] = headers[i + 1]!;
      },
      data(chunk) {
        answer.chunks.push(chunk);
        return onData?.(chunk);
      },
      end() {
        answer.ended = true;
        resolve(answer);
      },
      fail(error, sent) {
        answer.failed = { error, sent };
        resolve(answer);
      },
    };
    control = link.send(
      new URL(origin),
      {
        method: request.method ?? "POST",
        path: request.path ?? "/mcp",
        headers: request.headers ?? { "content-type": "application/json" },
        ...(request.body === undefined ? {} : { body: Buffer.from(request.body) }),
      },
      handler,
    );
  });
  return { done, abort: () => control.abort(), resume: () => control.resume() };
}

const text = (a: Answer) => Buffer.concat(a.chunks).toString("utf8");

const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function httpServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{
  server: Server;
  origin: string;
  connections: Socket[];
}> {
  const server = createServer(handler);
  const connections: Socket[] = [];
  server.on("connection", (socket) => connections.push(socket));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  closers.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections };
}

/** A TCP server that answers every request with `reply(socket)`. */
async function rawServer(reply: (socket: Socket) => void): Promise<{ origin: string; server: NetServer }> {
  const server = createNetServer((socket) => socket.once("data", () => reply(socket)));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function newLink(): ReplicaLink {
  const link = new ReplicaLink({ connectTimeoutMs: 2000 });
  closers.push(() => link.close());
  return link;
}

describe("ReplicaLink", () => {
  it("sends the method, path, headers and body, and keeps the connection for the next request", async () => {
    const seen: Array<{ method?: string; url?: string; headers: IncomingMessage["headers"]; body: string }> =
      [];
    const { origin, connections } = await httpServer((req, res) => {
      let body = "";
      req.setEncoding("utf8").on("data", (c: string) => (body += c));
      req.on("end", () => {
        seen.push({ method: req.method, url: req.url, headers: req.headers, body });
        res.writeHead(200, { "content-type": "application/json", "x-answer": String(seen.length) });
        res.end(JSON.stringify({ echo: body }));
      });
    });
    const link = newLink();
    const first = await send(link, origin, {
      path: "/mcp?x=1",
      headers: { "content-type": "application/json", "mcp-session-id": "s1" },
      body: '{"a":1}',
    }).done;
    expect(first.failed).toBeUndefined();
    expect(first.status).toBe(200);
    expect(first.headers["x-answer"]).toBe("1");
    expect(JSON.parse(text(first))).toEqual({ echo: '{"a":1}' });
    expect(seen[0]).toMatchObject({ method: "POST", url: "/mcp?x=1", body: '{"a":1}' });
    expect(seen[0]!.headers).toMatchObject({ "mcp-session-id": "s1", "content-length": "7" });
    expect(seen[0]!.headers.host).toBe(new URL(origin).host);

    const second = await send(link, origin, { method: "DELETE", headers: {} }).done;
    expect(second.status).toBe(200);
    expect(seen[1]).toMatchObject({ method: "DELETE", body: "" });
    expect(connections).toHaveLength(1);
  });

  it("relays a chunked event stream chunk by chunk, before it ends", async () => {
    let next: (() => void) | undefined;
    const { origin } = await httpServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.flushHeaders();
      let n = 0;
      next = () => {
        n++;
        if (n <= 3) res.write(`data: event ${n}\n\n`);
        else res.end();
      };
      next();
    });
    const link = newLink();
    const received: string[] = [];
    const { done } = send(
      link,
      origin,
      { method: "GET", headers: { accept: "text/event-stream" } },
      (chunk) => {
        received.push(chunk.toString("utf8"));
        // The next event is written only once this one arrived: it came before the stream's end.
        next!();
      },
    );
    const answer = await done;
    expect(answer.failed).toBeUndefined();
    expect(answer.headers["content-type"]).toBe("text/event-stream");
    expect(received.join("")).toBe("data: event 1\n\ndata: event 2\n\ndata: event 3\n\n");
    expect(received.length).toBeGreaterThanOrEqual(3);
  });

  it("pauses reading while the handler asks, and reads on when resumed, the connection still good after", async () => {
    const part = Buffer.alloc(64 * 1024, 120);
    const { origin, connections } = await httpServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (let i = 0; i < 32; i++) res.write(part);
      res.end();
    });
    const link = newLink();
    let paused = 0;
    const request = send(link, origin, { method: "GET", headers: {} }, () => {
      paused++;
      setImmediate(() => request.resume());
      return false;
    });
    const answer = await request.done;
    expect(answer.failed).toBeUndefined();
    expect(Buffer.concat(answer.chunks).length).toBe(32 * part.length);
    expect(paused).toBe(answer.chunks.length);
    // Parked after a pause: the next request on that connection is read.
    const next = await send(link, origin, { method: "GET", headers: {} }).done;
    expect(Buffer.concat(next.chunks).length).toBe(32 * part.length);
    expect(connections).toHaveLength(1);
  });

  it("reports a refused connection as not sent", async () => {
    const { origin, server } = await rawServer(() => {});
    await new Promise((resolve) => server.close(resolve));
    const answer = await send(newLink(), origin, { body: "{}" }).done;
    expect(answer.failed?.sent).toBe(false);
    expect((answer.failed!.error as NodeJS.ErrnoException).code).toBe("ECONNREFUSED");
  });

  it("reports an answer cut short as sent, and does not reuse its connection", async () => {
    let calls = 0;
    const { origin, connections } = await httpServer((req, res) => {
      calls++;
      if (calls === 1) {
        res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
        res.write('{"partial":');
        res.once("finish", () => {});
        setImmediate(() => req.socket.destroy());
        return;
      }
      res.end("{}");
    });
    const link = newLink();
    const cut = await send(link, origin, { body: "{}" }).done;
    expect(cut.failed?.sent).toBe(true);
    expect(cut.status).toBe(200);
    const next = await send(link, origin, { body: "{}" }).done;
    expect(next.status).toBe(200);
    expect(connections).toHaveLength(2);
  });

  it("drops an idle connection the server closed, and opens a new one", async () => {
    const { origin, server, connections } = await httpServer((_req, res) => res.end("ok"));
    const link = newLink();
    expect((await send(link, origin, { body: "{}" }).done).status).toBe(200);
    const closed = once(connections[0]!, "close");
    server.closeIdleConnections();
    await closed;
    const again = await send(link, origin, { body: "{}" }).done;
    expect(again.failed).toBeUndefined();
    expect(text(again)).toBe("ok");
    expect(connections).toHaveLength(2);
  });

  it("aborts: the server sees its request go", async () => {
    let gone: Promise<unknown> | undefined;
    let arrived: () => void = () => {};
    const here = new Promise<void>((resolve) => (arrived = resolve));
    const { origin } = await httpServer((req, res) => {
      gone = once(res, "close");
      void req;
      arrived();
    });
    const { done, abort } = send(newLink(), origin, { body: "{}" });
    await here;
    abort();
    const answer = await done;
    expect(answer.failed?.error.message).toBe("aborted");
    await gone;
  });

  it("does not reuse a connection the answer said to close", async () => {
    const { origin, connections } = await httpServer((_req, res) => {
      res.setHeader("connection", "close");
      res.end("bye");
    });
    const link = newLink();
    expect(text(await send(link, origin, { body: "{}" }).done)).toBe("bye");
    expect(text(await send(link, origin, { body: "{}" }).done)).toBe("bye");
    expect(connections).toHaveLength(2);
  });

  it("reads a body framed by the end of the connection", async () => {
    const { origin } = await rawServer((socket) =>
      socket.end("HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil the end"),
    );
    const answer = await send(newLink(), origin, { body: "{}" }).done;
    expect(answer.ended).toBe(true);
    expect(text(answer)).toBe("until the end");
  });

  it("fails on an answer that is not HTTP, naming what it got", async () => {
    const { origin } = await rawServer((socket) => socket.end("SSH-2.0-OpenSSH\r\n\r\n"));
    const answer = await send(newLink(), origin, { body: "{}" }).done;
    expect(answer.failed?.error).toBeInstanceOf(AnswerError);
    expect(answer.failed?.error.message).toContain("SSH-2.0");
    expect(answer.failed?.sent).toBe(true);
  });
});

describe("AnswerReader", () => {
  function read(
    bytes: Buffer,
    split: number[],
  ): { status?: number; headers: string[]; body: string; reusable?: boolean } {
    const out: { status?: number; headers: string[]; body: string; reusable?: boolean } = {
      headers: [],
      body: "",
    };
    const reader = new AnswerReader({
      head: (status, headers) => {
        out.status = status;
        out.headers = headers;
      },
      data: (chunk) => {
        out.body += chunk.toString("latin1");
      },
      end: (reusable) => {
        out.reusable = reusable;
      },
    });
    let at = 0;
    for (const cut of [...split, bytes.length]) {
      reader.feed(bytes.subarray(at, cut));
      at = cut;
    }
    return out;
  }

  const chunked = Buffer.from(
    "HTTP/1.1 100 Continue\r\n\r\n" +
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
      "b\r\ndata: one\n\n\r\n" +
      "1a;ext=1\r\nevent: x\ndata: two three\n\n\r\n" +
      "0\r\nx-trailer: t\r\n\r\n",
    "latin1",
  );
  const sized = Buffer.from(
    "HTTP/1.1 202 Accepted\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\nhello",
    "latin1",
  );

  it("reads the same answer however the bytes are split", () => {
    const whole = read(chunked, []);
    expect(whole).toEqual({
      status: 200,
      headers: ["content-type", "text/event-stream", "transfer-encoding", "chunked"],
      body: "data: one\n\nevent: x\ndata: two three\n\n",
      reusable: true,
    });
    for (let i = 1; i < chunked.length; i++) expect(read(chunked, [i])).toEqual(whole);
    for (let i = 1; i < chunked.length - 1; i += 7) expect(read(chunked, [i, i + 1])).toEqual(whole);
    const five = read(sized, []);
    expect(five).toMatchObject({ status: 202, body: "hello", reusable: true });
    for (let i = 1; i < sized.length; i++) expect(read(sized, [i])).toEqual(five);
  });

  it("refuses what it cannot read, naming it", () => {
    const bad = (text: string) => () => read(Buffer.from(text, "latin1"), []);
    expect(bad("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")).toThrow(/bad chunk size "zz"/);
    expect(bad("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n")).toThrow(
      /conflicting Content-Length/,
    );
    expect(bad("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n")).toThrow(/bad Content-Length/);
    expect(bad("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nab")).toThrow(/after the end/);
    expect(bad("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\naXX")).toThrow(/CRLF/);
    expect(() => read(Buffer.alloc(70 * 1024, 65), [])).toThrow(/head too large/);
    // Not HTTP: refused from its first line (or bytes), without waiting for a head's end.
    expect(bad("SSH-2.0-OpenSSH_9.2\r\n")).toThrow(/not an HTTP\/1.x status line: "SSH-2.0/);
    expect(bad("SSH-")).toThrow(/not an HTTP\/1.x status line/);
    expect(bad("HTTP/1.1 200 OK\r\ncontent-")).not.toThrow();
    expect(bad("HTTP/")).not.toThrow();
  });

  it("ends a bodiless answer at its head, and says when the connection must close", () => {
    expect(read(Buffer.from("HTTP/1.1 204 No Content\r\n\r\n"), [])).toMatchObject({
      status: 204,
      reusable: true,
    });
    expect(
      read(Buffer.from("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"), []),
    ).toMatchObject({
      reusable: false,
    });
    expect(read(Buffer.from("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"), [])).toMatchObject({
      reusable: false,
    });
  });
});
