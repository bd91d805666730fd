import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A `server.json` as the test registry serves it, with whether it is the latest version. */
export interface TestRegistryEntry {
  server: Record<string, unknown> & { name: string };
  isLatest?: boolean;
  /** The registry's status of the entry; default `active`. */
  status?: "active" | "deprecated" | "deleted";
}

/** A local MCP Registry (the `/v0.1/servers` API) on 127.0.0.1, port 0. */
export interface TestRegistry {
  url: string;
  /** The query strings of every request, in order. */
  requests: URLSearchParams[];
  close(): Promise<void>;
}

/**
 * Serves `GET /v0.1/servers` as the official registry does: `search` as a case-insensitive
 * substring of the name, `version=latest` leaving older versions out, pages of at most
 * `pageSize` (whatever `limit` asks, so that paging is exercised) with an opaque `nextCursor`,
 * and the registry's `_meta` on each item.
 */
export async function startTestRegistry(entries: TestRegistryEntry[], pageSize = 2): Promise<TestRegistry> {
  const requests: URLSearchParams[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://registry");
    if (req.method !== "GET" || url.pathname !== "/v0.1/servers") {
      res
        .writeHead(404, { "content-type": "application/problem+json" })
        .end('{"title":"Not Found","status":404}');
      return;
    }
    requests.push(url.searchParams);
    const search = (url.searchParams.get("search") ?? "").toLowerCase();
    const latestOnly = url.searchParams.get("version") === "latest";
    const matches = entries.filter(
      (entry) =>
        entry.server.name.toLowerCase().includes(search) && (!latestOnly || entry.isLatest !== false),
    );
    const cursor = url.searchParams.get("cursor");
    const start = cursor === null ? 0 : Number(Buffer.from(cursor, "base64url").toString());
    const limit = Math.min(pageSize, Number(url.searchParams.get("limit") ?? pageSize));
    const page = matches.slice(start, start + limit);
    const next =
      start + limit < matches.length ? Buffer.from(String(start + limit)).toString("base64url") : undefined;
    const body = {
      servers: page.map((entry) => ({
        server: entry.server,
        _meta: {
          "io.modelcontextprotocol.registry/official": {
            status: entry.status ?? "active",
            publishedAt: "2026-09-01T10:00:00Z",
            updatedAt: "2026-09-01T10:00:00Z",
            isLatest: entry.isLatest !== false,
          },
        },
      })),
      metadata: { count: page.length, ...(next === undefined ? {} : { nextCursor: next }) },
    };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((done) => server.close(() => done())),
  };
}
