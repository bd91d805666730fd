/**
 * A remote MCP server that checks its callers' tokens for real, as a server behind an identity
 * provider does: the SDK v2 `createMcpHandler` behind the SDK's own bearer gate
 * (`requireBearerAuth`), whose verifier checks each request's JWT with `jose` against the
 * provider's JWKS (signature, issuer, audience = this server, expiry). Its `whoami` tool
 * answers with the token's `sub` (and `act`, `jti`, `scope`) and records who each call was
 * served for, so a test can count crossings: a call made for alice must have been served with
 * a token of alice. It publishes its protected-resource metadata (RFC 9728), and a test can
 * revoke one token (by `jti`) to see a caller get a fresh one after the 401.
 *
 * @example
 * const upstream = await startTokenCheckingServer({ issuer: as.issuer, jwksUri: as.endpoints.jwks });
 * // a client with `Authorization: Bearer <token for upstream.url>` calls whoami → "alice"
 * await upstream.close();
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type AuthInfo,
  createMcpHandler,
  getOAuthProtectedResourceMetadataUrl,
  McpServer,
  OAuthError,
  OAuthErrorCode,
  requireBearerAuth,
} from "@modelcontextprotocol/server";
import { createRemoteJWKSet, jwtVerify } from "jose";
import * as z from "zod/v4";
import { toNodeListener } from "../fixtures/servers/node-fetch-listener.js";

/** What {@link startTokenCheckingServer} checks. */
export interface TokenCheckingOptions {
  /** The identity provider whose tokens it takes (`iss`). */
  issuer: string;
  /** Where that provider's keys are. */
  jwksUri: string;
  /** The audience its tokens must name; default its own MCP URL (`http://127.0.0.1:<port>/mcp`). */
  audience?: string;
  /** Scopes every request's token must carry (403 `insufficient_scope` otherwise). */
  requiredScopes?: string[];
}

/** One `whoami` call, as the server served it. */
export interface ServedCall {
  /** The verified token's `sub`. */
  sub: string;
  /** The `tag` the caller sent (a test's own label for the call, such as the user it was made for). */
  tag?: string;
  /** The token's `jti`. */
  jti?: string;
  /** The `sub` of the token's `act` claim (who exchanged it). */
  actor?: string;
}

/** A running token-checking server. */
export interface TokenCheckingServer {
  /** The MCP endpoint. */
  readonly url: string;
  /** The audience its tokens must name. */
  readonly audience: string;
  /** Every `whoami` call served, in order. */
  readonly served: readonly ServedCall[];
  /** Requests refused for their token (401 and 403). */
  readonly refused: number;
  /** The tokens its `leak` tool was called with, by `sub`, in order. */
  readonly leaked: ReadonlyMap<string, readonly string[]>;
  /** Refuses the token with this `jti` from now on (as if revoked at the provider). */
  revoke(jti: string): void;
  close(): Promise<void>;
}

/** Starts a token-checking MCP server on 127.0.0.1 (port 0). */
export async function startTokenCheckingServer(options: TokenCheckingOptions): Promise<TokenCheckingServer> {
  const served: ServedCall[] = [];
  const leaked = new Map<string, string[]>();
  const revoked = new Set<string>();
  let refused = 0;
  // An unknown kid fetches the keys again at once (jose's default waits 30 s between fetches):
  // a test that rotates the provider's keys sees its new tokens taken.
  const jwks = createRemoteJWKSet(new URL(options.jwksUri), { cooldownDuration: 0 });
  const http = createServer();
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/mcp`;
  const audience = options.audience ?? url;
  const metadataUrl = getOAuthProtectedResourceMetadataUrl(new URL(url));

  const gate = requireBearerAuth({
    verifier: {
      async verifyAccessToken(token: string): Promise<AuthInfo> {
        try {
          const { payload } = await jwtVerify(token, jwks, { issuer: options.issuer, audience });
          if (typeof payload.jti === "string" && revoked.has(payload.jti))
            throw new OAuthError(OAuthErrorCode.InvalidToken, "the token was revoked");
          return {
            token,
            clientId: typeof payload.client_id === "string" ? payload.client_id : "",
            scopes: typeof payload.scope === "string" ? payload.scope.split(" ") : [],
            ...(payload.exp === undefined ? {} : { expiresAt: payload.exp }),
            extra: { claims: payload },
          };
        } catch (error) {
          if (error instanceof OAuthError) throw error;
          throw new OAuthError(OAuthErrorCode.InvalidToken, (error as Error).message);
        }
      },
    },
    ...(options.requiredScopes === undefined ? {} : { requiredScopes: options.requiredScopes }),
    resourceMetadataUrl: metadataUrl,
  });

  const handler = createMcpHandler(({ authInfo }) => {
    const server = new McpServer({ name: "token-checking-server", version: "1.0.0" });
    const claims = (authInfo?.extra?.claims ?? {}) as Record<string, unknown>;
    server.registerTool(
      "whoami",
      {
        description: "Answers with the sub of the token the call came with",
        inputSchema: z.object({ tag: z.string().optional() }),
      },
      async ({ tag }) => {
        const act = claims.act as { sub?: unknown } | undefined;
        const call: ServedCall = {
          sub: String(claims.sub),
          ...(tag === undefined ? {} : { tag }),
          ...(typeof claims.jti === "string" ? { jti: claims.jti } : {}),
          ...(typeof act?.sub === "string" ? { actor: act.sub } : {}),
        };
        served.push(call);
        return {
          content: [{ type: "text", text: call.sub }],
          structuredContent: { ...call, scope: claims.scope ?? null },
        };
      },
    );
    // Fails quoting the token it was called with, as a server's error may.
    server.registerTool(
      "leak",
      { description: "Fails quoting the token the call came with", inputSchema: z.object({}) },
      async () => {
        const token = authInfo?.token ?? "";
        const sub = String(claims.sub);
        leaked.set(sub, [...(leaked.get(sub) ?? []), token]);
        return { isError: true, content: [{ type: "text", text: `refused with token ${token}` }] };
      },
    );
    return server;
  });

  const listener = toNodeListener(async (request) => {
    const path = new URL(request.url).pathname;
    if (path === new URL(metadataUrl).pathname) {
      return Response.json({ resource: audience, authorization_servers: [options.issuer] });
    }
    if (path !== "/mcp") return new Response(null, { status: 404 });
    const auth = await gate(request);
    if (auth instanceof Response) {
      refused++;
      return auth;
    }
    return handler.fetch(request, { authInfo: auth });
  });
  http.on("request", listener);

  return {
    url,
    audience,
    get served() {
      return served;
    },
    get refused() {
      return refused;
    },
    leaked,
    revoke: (jti) => {
      revoked.add(jti);
    },
    close: async () => {
      await handler.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
