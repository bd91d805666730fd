import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** What the test host answers at one path. */
export interface CardRoute {
  status?: number;
  headers?: Record<string, string>;
  /** A document (sent as JSON) or a text sent as it is. */
  body?: unknown;
}

/** A host of Server Cards and AI Catalogs on 127.0.0.1, port 0. */
export interface CardHost {
  /** `http://127.0.0.1:PORT`. */
  origin: string;
  port: number;
  /** Paths asked for, in order. */
  requests: string[];
  /** Sets (or replaces) what a path answers. */
  route(path: string, route: CardRoute): void;
  close(): Promise<void>;
}

/** Serves the routes it is given, 404 elsewhere, and records every path asked for. */
export async function startCardHost(): Promise<CardHost> {
  const routes = new Map<string, CardRoute>();
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = req.url ?? "/";
    requests.push(path);
    const route = routes.get(path);
    if (route === undefined) {
      res.writeHead(404).end();
      return;
    }
    const body = typeof route.body === "string" ? route.body : JSON.stringify(route.body ?? {});
    res.writeHead(route.status ?? 200, { "content-type": "application/json", ...route.headers }).end(body);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    route: (path, route) => routes.set(path, route),
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
