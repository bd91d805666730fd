/**
 * node:http's client with a keep-alive `Agent` behind the {@link ReplicaLink} interface
 * (`send(origin, request, handler)`), for the replica-link bench and the malformed-answer test:
 * the client a replica would use without a link of its own.
 */
import { Agent, type ClientRequest, request as httpRequest, type IncomingMessage } from "node:http";
import type { LinkControl, LinkHandler, LinkRequest } from "../../src/cluster/replica-link.js";

export class NodeHttpLink {
  readonly #agent: Agent;

  /** `connections`: sockets per origin. */
  constructor(options: { connections?: number } = {}) {
    this.#agent = new Agent({ keepAlive: true, maxSockets: options.connections ?? 64 });
  }

  send(origin: URL, request: LinkRequest, handler: LinkHandler): LinkControl {
    let settled = false;
    let begun = false;
    let sent = false;
    let answer: IncomingMessage | undefined;
    // Methods, not arrow functions assigned to names: see UndiciLink.send.
    const on = {
      fail(error: Error) {
        if (settled) return;
        settled = true;
        handler.fail(error, sent || begun);
      },
    };
    const headers: Record<string, string | string[]> = { ...request.headers };
    if (request.body !== undefined) headers["content-length"] = String(request.body.length);
    const req: ClientRequest = httpRequest(
      {
        host: origin.hostname,
        port: origin.port,
        method: request.method,
        path: request.path,
        headers,
        agent: this.#agent,
      },
      (res) => {
        begun = true;
        answer = res;
        const flat: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2)
          flat.push(res.rawHeaders[i]!.toLowerCase(), res.rawHeaders[i + 1]!);
        handler.head(res.statusCode ?? 0, flat);
        res.on("data", (chunk: Buffer) => {
          // node:http may still emit what it had read after the error that ended the request.
          if (settled) return;
          if (handler.data(chunk) === false) res.pause();
        });
        res.on("end", () => {
          if (settled) return;
          settled = true;
          handler.end();
        });
        res.on("error", on.fail);
        // An answer cut short ends in "aborted" and "close" without "end".
        res.on("close", () => {
          if (!res.complete) on.fail(new Error("the peer closed the connection before its answer was whole"));
        });
      },
    );
    req.on("socket", (socket) => {
      if (!socket.connecting) sent = true;
      else socket.once("connect", () => (sent = true));
    });
    req.on("error", on.fail);
    req.end(request.body);
    return {
      abort() {
        on.fail(new Error("aborted"));
        req.destroy();
      },
      resume() {
        answer?.resume();
      },
    };
  }

  /** Closes the kept connections. */
  close(): void {
    this.#agent.destroy();
  }
}
