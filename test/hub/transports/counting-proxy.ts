/**
 * A reverse HTTP proxy on 127.0.0.1, port 0, that counts the exchanges passing through it, so
 * a test can see that a client left no request or stream open on a server it does not control.
 * Bodies stream both ways; a client that goes away takes its upstream request down with it.
 */
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { OpenCount, socketsOf } from "../../support/open-count.js";

export interface CountingProxy {
  /** `http://127.0.0.1:<port>`; paths are passed on as they are. */
  origin: string;
  /** Exchanges whose answer has not ended yet. */
  readonly open: number;
  /** Resolves when no exchange is open (at once when none is). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const upstream = new URL(target);
  const requests = new OpenCount();
  const server = createServer((req, res) => {
    requests.track(res);
    const out = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.headers);
        answer.pipe(res);
      },
    );
    out.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.once("close", () => out.destroy());
    req.pipe(out);
  });
  const sockets = socketsOf(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    get open() {
      return requests.open;
    },
    idle: () => requests.idle(),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
