import { once } from "node:events";
import { createServer } from "node:http";
import { type AddressInfo, createServer as createNetServer, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  type LinkControl,
  type LinkHandler,
  type LinkRequest,
  ReplicaLink,
} from "../../src/cluster/replica-link.js";
import { NodeHttpLink } from "../support/node-http-link.js";
import { UndiciLink } from "../support/undici-link.js";

// The same malformed answers, from a raw TCP server on loopback, fed to the replica link and to
// the clients it was measured against (bench/replica-link-bench.ts): each must end the request
// with an error, once, and drop the connection; none may hang, crash, or report an answer.
// Nothing here waits on time: a client that never gives up fails the test by its timeout.

interface Client {
  send(origin: URL, request: LinkRequest, handler: LinkHandler): LinkControl;
  close(): unknown;
}

const clients: Array<{ name: string; make: () => Client }> = [
  { name: "ReplicaLink", make: () => new ReplicaLink({ connectTimeoutMs: 5000 }) },
  { name: "undici Pool.dispatch", make: () => new UndiciLink() },
  { name: "node:http keep-alive", make: () => new NodeHttpLink() },
];

const SSE_HEAD = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
const EVENT = 'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n';
const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;

interface Case {
  name: string;
  /** What the owner does once the request came. */
  answer(socket: Socket): void;
  /** What the handler does with a part of the body: `abort` ends the request there. */
  onData?: "abort";
}

const cases: Case[] = [
  {
    name: "a bad chunk size",
    answer: (socket) => socket.write(`${SSE_HEAD}${chunk(EVENT)}zz\r\n${EVENT}\r\n`),
  },
  {
    name: "conflicting Content-Length headers",
    answer: (socket) =>
      socket.write(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\n{}",
      ),
  },
  {
    name: "a body cut short of its Content-Length",
    answer: (socket) =>
      socket.end(
        'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"jsonrpc":',
      ),
  },
  {
    name: "a head that overflows (100 KiB of headers, no end)",
    answer: (socket) => socket.write(`HTTP/1.1 200 OK\r\nx-big: ${"a".repeat(100 * 1024)}`),
  },
  {
    name: "a garbage status line, the connection held open",
    answer: (socket) => socket.write("SSH-2.0-OpenSSH_9.2\r\n"),
  },
  {
    name: "a head whose status is not a number",
    answer: (socket) => socket.write("HTTP/1.1 2xx OK\r\ncontent-length: 0\r\n\r\n"),
  },
  {
    name: "a connection closed in the head",
    answer: (socket) => socket.end("HTTP/1.1 200 OK\r\ncontent-type: text/ev"),
  },
  {
    name: "a connection closed mid-stream",
    answer: (socket) => socket.end(`${SSE_HEAD}${chunk(EVENT)}${chunk(EVENT).slice(0, 20)}`),
  },
  {
    name: "an event stream that never ends while its client is gone",
    // A megabyte of events, more than the socket buffers hold, and no end: the client reads the
    // first part, pauses as a client whose socket is full would, then goes away.
    answer: (socket) => socket.write(SSE_HEAD + chunk(EVENT.repeat((1024 * 1024) / EVENT.length))),
    onData: "abort",
  },
];

const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A TCP server that answers the first request of each connection with `answer`. */
async function rawOwner(answer: (socket: Socket) => void): Promise<{ origin: URL; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server = createNetServer((socket) => {
    sockets.push(socket);
    socket.on("error", () => {});
    let head = "";
    const onData = (data: Buffer) => {
      head += data.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      socket.off("data", onData);
      // Reads on (and drops) whatever else comes, so the client's writes never block.
      socket.resume();
      answer(socket);
    };
    socket.on("data", onData);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  closers.push(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise((resolve) => server.close(resolve));
  });
  return { origin: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`), sockets };
}

interface Outcome {
  events: string[];
  error?: Error;
}

/** Sends a JSON-RPC POST through `client`; resolves once it ended or failed. */
function post(client: Client, origin: URL, onData?: "abort"): Promise<Outcome> {
  const outcome: Outcome = { events: [] };
  return new Promise((resolve) => {
    const control = client.send(
      origin,
      {
        method: "POST",
        path: origin.pathname,
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}'),
      },
      {
        head: (status) => outcome.events.push(`head ${status}`),
        data: () => {
          if (outcome.events.at(-1) !== "data") outcome.events.push("data");
          if (onData !== "abort") return true;
          // The client went away: forward.ts aborts the request from the response's "close".
          queueMicrotask(() => control.abort());
          return false;
        },
        end: () => {
          outcome.events.push("end");
          resolve(outcome);
        },
        fail: (error) => {
          outcome.events.push("fail");
          outcome.error = error;
          resolve(outcome);
        },
      },
    );
  });
}

describe.each(clients)("$name against malformed answers", ({ make }) => {
  it.each(cases)("refuses $name with an error and drops the connection", async (malformed) => {
    const client = make();
    closers.push(() => client.close());
    const { origin, sockets } = await rawOwner(malformed.answer);
    const outcome = await post(client, origin, malformed.onData);
    expect(outcome.error).toBeInstanceOf(Error);
    expect(outcome.error!.message).not.toBe("");
    expect(outcome.events.at(-1)).toBe("fail");
    expect(outcome.events).not.toContain("end");
    // The connection is closed, not kept for another request: the owner sees it go (a reset, when
    // the client closed it with the answer unread).
    expect(sockets).toHaveLength(1);
    if (!sockets[0]!.destroyed) await new Promise((resolve) => sockets[0]!.once("close", resolve));
  });

  it("still forwards to a sound owner after every malformed answer", async () => {
    const client = make();
    closers.push(() => client.close());
    const owner = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(EVENT);
    });
    owner.listen(0, "127.0.0.1");
    await once(owner, "listening");
    closers.push(() => {
      owner.closeAllConnections();
      return new Promise((resolve) => owner.close(resolve));
    });
    const sound = new URL(`http://127.0.0.1:${(owner.address() as AddressInfo).port}/mcp`);
    for (const malformed of cases) {
      const { origin } = await rawOwner(malformed.answer);
      expect((await post(client, origin, malformed.onData)).events.at(-1)).toBe("fail");
      expect((await post(client, sound)).events).toEqual(["head 200", "data", "end"]);
    }
  });
});
