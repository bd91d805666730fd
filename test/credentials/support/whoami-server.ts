/**
 * A remote MCP server behind its own real authorization check, for the per-user tests: the SDK
 * v2 server (`createMcpHandler`) gated by the SDK's `requireBearerAuth`, its verifier checking
 * JWT access tokens with `jose` against the test authorization server's JWKS (issuer, audience =
 * this server's URL). It publishes RFC 9728 metadata naming that authorization server, so a
 * client finds it from the 401. Its `whoami` tool answers with the `sub` of the token it was
 * called with; every call is recorded (sub and token), and {@link WhoamiServer.refuseTokensSeen}
 * makes it refuse (401) every token seen so far, as a server does once tokens expire.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createMcpHandler,
  McpServer,
  OAuthError,
  OAuthErrorCode,
  requireBearerAuth,
} from "@modelcontextprotocol/server";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { toNodeListener } from "../../fixtures/servers/node-fetch-listener.js";
import type { AuthServer } from "../../support/oidc-provider.js";

export interface WhoamiServer {
  /** `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  /** The `whoami` calls answered: who the token named, and the token. */
  readonly calls: Array<{ sub: string; token: string }>;
  /** Tokens refused with 401 so far. */
  readonly refused: number;
  refuseTokensSeen(): void;
  close(): Promise<void>;
}

export async function startWhoamiServer(as: AuthServer): Promise<WhoamiServer> {
  const jwks = createRemoteJWKSet(new URL(as.endpoints.jwks));
  const calls: Array<{ sub: string; token: string }> = [];
  const seen = new Set<string>();
  const banned = new Set<string>();
  let refused = 0;
  let base = "";
  const mcp = createMcpHandler(
    (ctx) => {
      const server = new McpServer({ name: "whoami", version: "1.0.0" });
      server.registerTool("whoami", { description: "Says whose token called it" }, async () => {
        const auth = ctx.authInfo;
        const sub = String(auth?.extra?.sub ?? "nobody");
        calls.push({ sub, token: auth?.token ?? "" });
        return { content: [{ type: "text", text: sub }] };
      });
      return server;
    },
    { legacy: "stateless" },
  );
  const gate = () =>
    requireBearerAuth({
      verifier: {
        async verifyAccessToken(token) {
          try {
            const { payload } = await jwtVerify(token, jwks, {
              issuer: as.issuer,
              audience: `${base}/mcp`,
              typ: "at+jwt",
            });
            if (banned.has(token)) throw new Error("refused");
            seen.add(token);
            return {
              token,
              clientId: String(payload.client_id ?? ""),
              scopes: String(payload.scope ?? "").split(" "),
              expiresAt: payload.exp,
              resource: new URL(`${base}/mcp`),
              extra: { sub: payload.sub },
            };
          } catch {
            refused++;
            throw new OAuthError(OAuthErrorCode.InvalidToken, "the token is not valid here");
          }
        },
      },
      resourceMetadataUrl: `${base}/.well-known/oauth-protected-resource/mcp`,
      expectedResource: new URL(`${base}/mcp`),
    });
  const http: Server = createServer(
    toNodeListener(async (request) => {
      const { pathname } = new URL(request.url);
      if (pathname.startsWith("/.well-known/oauth-protected-resource"))
        return Response.json({
          resource: `${base}/mcp`,
          authorization_servers: [as.issuer],
          scopes_supported: ["mcp:tools"],
          bearer_methods_supported: ["header"],
        });
      if (pathname !== "/mcp") return new Response(null, { status: 404 });
      const auth = await gate()(request);
      if (auth instanceof Response) return auth;
      return mcp.fetch(request, { authInfo: auth });
    }),
  );
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url: `${base}/mcp`,
    calls,
    get refused() {
      return refused;
    },
    refuseTokensSeen() {
      for (const token of seen) banned.add(token);
    },
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await mcp.close();
    },
  };
}
