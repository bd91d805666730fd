/**
 * Stateful 2025 Streamable HTTP for the "everything" server: one SDK
 * `WebStandardStreamableHTTPServerTransport` and one server instance per `Mcp-Session-Id`.
 * The SDK's own 2025 leg of `createMcpHandler` is stateless (a fresh instance per request), so
 * a tool could never receive the client's answer to a sampling or elicitation request it sent;
 * sessions keep the instance that is waiting.
 */
import { randomUUID } from "node:crypto";
import {
  isInitializeRequest,
  type McpServer,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
}

export interface LegacySessions {
  /** Serves one 2025 request (POST, GET stream or DELETE). */
  handle(request: Request): Promise<Response>;
  readonly size: number;
  close(): Promise<void>;
}

function rpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status });
}

export function createLegacySessions(factory: () => McpServer): LegacySessions {
  const sessions = new Map<string, Session>();

  async function open(request: Request): Promise<Response> {
    let body: unknown;
    try {
      body = await request.json();
    } catch {
      return rpcError(400, -32700, "Parse error: the body is not JSON.");
    }
    if (!isInitializeRequest(body)) {
      return rpcError(400, -32000, "Bad Request: no valid session id, and the request is not initialize.");
    }
    const server = factory();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server });
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      void server.close().catch(() => {});
    };
    await server.connect(transport);
    return transport.handleRequest(request, { parsedBody: body });
  }

  return {
    async handle(request) {
      const id = request.headers.get("mcp-session-id");
      if (id === null) {
        if (request.method !== "POST")
          return rpcError(400, -32000, "Bad Request: Mcp-Session-Id header is required.");
        return open(request);
      }
      const session = sessions.get(id);
      if (session === undefined) return rpcError(404, -32001, "Session not found");
      return session.transport.handleRequest(request);
    },
    get size() {
      return sessions.size;
    },
    async close() {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(open.map(({ server }) => server.close()));
    },
  };
}
