/**
 * A protected MCP server with its own authorization server and an enterprise identity provider,
 * checking everything for real with `jose`: the authorization server takes the JWT-bearer grant
 * (RFC 7523) with a workload's JWT or an ID-JAG, and client credentials; it binds tokens to a
 * DPoP key when the token request carries a valid proof (RFC 9449), and the MCP server then
 * wants `DPoP <token>` with a proof of that key (`ath` included). The identity provider
 * exchanges an ID token for an ID-JAG (RFC 8693). A test sees every token request, can revoke
 * the tokens issued so far (the next call gets a 401), and can make either party refuse.
 *
 * @example
 * const auth = await startAssertionGrantServer();
 * const jwt = await auth.workloadJwt(); // audience: auth.issuer
 * // a hub with oauth: { grant: jwt-bearer, assertion: { file } } calls auth.mcpUrl's whoami
 * await auth.close();
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import {
  calculateJwkThumbprint,
  decodeProtectedHeader,
  EmbeddedJWK,
  generateKeyPair,
  type JWK,
  jwtVerify,
  SignJWT,
} from "jose";
import * as z from "zod/v4";
import { toNodeListener } from "../fixtures/servers/node-fetch-listener.js";

const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";

/** One request at the authorization server's token endpoint, as it saw it. */
export interface TokenRequest {
  grant: string;
  /** The assertion presented (JWT-bearer), verbatim. */
  assertion?: string;
  /** The thumbprint of the DPoP key whose proof came with it. */
  jkt?: string;
  /** The client authenticated with HTTP Basic, if any. */
  basicClient?: string;
  answered: "token" | "error";
}

/** An OAuth error a party answers with instead of a token. */
export interface Refusal {
  error: string;
  /** Echo the presented assertion (or subject token) in `error_description`, as a careless server may. */
  echo?: boolean;
}

export interface AssertionGrantServer {
  /** The MCP endpoint (tool `whoami`). */
  readonly mcpUrl: string;
  /** The authorization server's issuer: the audience of workload JWTs and ID-JAGs. */
  readonly issuer: string;
  /** The identity provider's token endpoint (RFC 8693 exchange). */
  readonly idpTokenEndpoint: string;
  /** The identity provider's issuer (of ID tokens). */
  readonly idpIssuer: string;
  readonly tokenRequests: readonly TokenRequest[];
  /** ID tokens the identity provider exchanged, in order. */
  readonly exchanges: readonly string[];
  /** How each authorized MCP request presented its token. */
  readonly presented: ReadonlyArray<{ scheme: string; jkt?: string }>;
  /** Makes the authorization server refuse the next token requests with this error (undefined: stop). */
  refuseGrant(refusal: Refusal | undefined): void;
  /** Makes the identity provider refuse exchanges. */
  refuseExchange(refusal: Refusal | undefined): void;
  /** Every token issued so far is refused from now on. */
  revokeAll(): void;
  /** A workload JWT signed by the workload's platform key, audience the authorization server. */
  workloadJwt(subject?: string): Promise<string>;
  /** An ID token of the identity provider for `user`, issued to the client `idpClientId`. */
  idToken(user: string): Promise<string>;
  close(): Promise<void>;
}

/** The client credentials both parties know. */
export const CLIENTS = {
  /** mcplex at the identity provider. */
  idp: { id: "mcplex-at-idp", secret: "idp-secret" },
  /** mcplex at the MCP server's authorization server. */
  as: { id: "mcplex-at-as", secret: "as-secret" },
};

interface Issued {
  jkt?: string;
  revoked: boolean;
}

export async function startAssertionGrantServer(): Promise<AssertionGrantServer> {
  const workload = await generateKeyPair("ES256");
  const idp = await generateKeyPair("ES256");
  const tokens = new Map<string, Issued>();
  const tokenRequests: TokenRequest[] = [];
  const exchanges: string[] = [];
  const presented: Array<{ scheme: string; jkt?: string }> = [];
  let grantRefusal: Refusal | undefined;
  let exchangeRefusal: Refusal | undefined;

  const as = await listen();
  const rs = await listen();
  const issuer = origin(as);
  const mcpUrl = `${origin(rs)}/mcp`;
  const idpIssuer = `${issuer}/idp`;

  const oauthError = (refusal: Refusal, echoed: string) =>
    Response.json(
      { error: refusal.error, error_description: refusal.echo === true ? `refused ${echoed}` : "refused" },
      { status: 400 },
    );

  as.on(
    "request",
    toNodeListener(async (request) => {
      const url = new URL(request.url);
      if (url.pathname === "/.well-known/oauth-authorization-server") {
        return Response.json({
          issuer,
          token_endpoint: `${issuer}/token`,
          authorization_endpoint: `${issuer}/authorize`,
          response_types_supported: ["code"],
          grant_types_supported: [JWT_BEARER, "client_credentials"],
          token_endpoint_auth_methods_supported: ["client_secret_basic", "none"],
          dpop_signing_alg_values_supported: ["ES256"],
        });
      }
      const form = new URLSearchParams(await request.text());
      if (url.pathname === "/idp/token") {
        const subject = form.get("subject_token") ?? "";
        if (form.get("grant_type") !== TOKEN_EXCHANGE)
          return Response.json({ error: "unsupported_grant_type" }, { status: 400 });
        if (exchangeRefusal !== undefined) return oauthError(exchangeRefusal, subject);
        const { payload } = await jwtVerify(subject, idp.publicKey, {
          issuer: idpIssuer,
          audience: CLIENTS.idp.id,
        });
        if (form.get("client_id") !== CLIENTS.idp.id || form.get("client_secret") !== CLIENTS.idp.secret)
          return Response.json({ error: "invalid_client" }, { status: 401 });
        exchanges.push(subject);
        const idJag = await new SignJWT({
          sub: payload.sub,
          resource: form.get("resource"),
          client_id: CLIENTS.as.id,
        })
          .setProtectedHeader({ alg: "ES256", typ: "oauth-id-jag+jwt" })
          .setIssuer(idpIssuer)
          .setAudience(form.get("audience") ?? "")
          .setIssuedAt()
          .setExpirationTime("5m")
          .setJti(crypto.randomUUID())
          .sign(idp.privateKey);
        return Response.json({
          access_token: idJag,
          issued_token_type: "urn:ietf:params:oauth:token-type:id-jag",
          token_type: "N_A",
        });
      }
      if (url.pathname !== "/token") return new Response(null, { status: 404 });
      const grant = form.get("grant_type") ?? "";
      const seen: TokenRequest = { grant, answered: "error" };
      tokenRequests.push(seen);
      const basic = basicClient(request.headers.get("authorization"));
      if (basic !== undefined) seen.basicClient = basic.id;
      const proof = request.headers.get("dpop");
      if (proof !== null) seen.jkt = await checkProof(proof, "POST", `${issuer}/token`);
      if (grant === JWT_BEARER) {
        const assertion = form.get("assertion") ?? "";
        seen.assertion = assertion;
        if (grantRefusal !== undefined) return oauthError(grantRefusal, assertion);
        const idJag = decodeProtectedHeader(assertion).typ === "oauth-id-jag+jwt";
        if (idJag && (basic?.id !== CLIENTS.as.id || basic.secret !== CLIENTS.as.secret))
          return Response.json({ error: "invalid_client" }, { status: 401 });
        try {
          await jwtVerify(assertion, idJag ? idp.publicKey : workload.publicKey, { audience: issuer });
        } catch {
          return Response.json({ error: "invalid_grant" }, { status: 400 });
        }
      } else if (grant === "client_credentials") {
        if (basic?.id !== CLIENTS.as.id || basic.secret !== CLIENTS.as.secret)
          return Response.json({ error: "invalid_client" }, { status: 401 });
      } else return Response.json({ error: "unsupported_grant_type" }, { status: 400 });
      const token = crypto.randomUUID();
      tokens.set(token, { ...(seen.jkt === undefined ? {} : { jkt: seen.jkt }), revoked: false });
      seen.answered = "token";
      return Response.json({
        access_token: token,
        token_type: seen.jkt === undefined ? "Bearer" : "DPoP",
        expires_in: 3600,
      });
    }),
  );

  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: "assertion-grant-server", version: "1.0.0" });
    server.registerTool("whoami", { description: "Answers ok", inputSchema: z.object({}) }, async () => ({
      content: [{ type: "text", text: "ok" }],
    }));
    return server;
  });
  const metadataPath = "/.well-known/oauth-protected-resource/mcp";
  rs.on(
    "request",
    toNodeListener(async (request) => {
      const url = new URL(request.url);
      if (url.pathname === metadataPath)
        return Response.json({ resource: mcpUrl, authorization_servers: [issuer] });
      if (url.pathname !== "/mcp") return new Response(null, { status: 404 });
      const challenge = new Response(null, {
        status: 401,
        headers: { "www-authenticate": `Bearer resource_metadata="${origin(rs)}${metadataPath}"` },
      });
      const [scheme = "", token = ""] = (request.headers.get("authorization") ?? "").split(" ");
      const issued = tokens.get(token);
      if (issued === undefined || issued.revoked) return challenge;
      if (issued.jkt !== undefined) {
        const proof = request.headers.get("dpop");
        if (scheme !== "DPoP" || proof === null) return challenge;
        const jkt = await checkProof(proof, request.method, mcpUrl, token).catch(() => undefined);
        if (jkt !== issued.jkt) return challenge;
      } else if (scheme !== "Bearer") return challenge;
      presented.push({ scheme, ...(issued.jkt === undefined ? {} : { jkt: issued.jkt }) });
      return handler.fetch(request);
    }),
  );

  return {
    mcpUrl,
    issuer,
    idpIssuer,
    idpTokenEndpoint: `${issuer}/idp/token`,
    tokenRequests,
    exchanges,
    presented,
    refuseGrant: (refusal) => {
      grantRefusal = refusal;
    },
    refuseExchange: (refusal) => {
      exchangeRefusal = refusal;
    },
    revokeAll: () => {
      for (const issued of tokens.values()) issued.revoked = true;
    },
    workloadJwt: (subject = "system:serviceaccount:apps:mcplex") =>
      new SignJWT({})
        .setProtectedHeader({ alg: "ES256" })
        .setIssuer("https://kubernetes.default.svc")
        .setSubject(subject)
        .setAudience(issuer)
        .setIssuedAt()
        .setExpirationTime("10m")
        .setJti(crypto.randomUUID())
        .sign(workload.privateKey),
    idToken: (user) =>
      new SignJWT({ email: user })
        .setProtectedHeader({ alg: "ES256" })
        .setIssuer(idpIssuer)
        .setSubject(user)
        .setAudience(CLIENTS.idp.id)
        .setIssuedAt()
        .setExpirationTime("1h")
        .sign(idp.privateKey),
    close: async () => {
      await handler.close();
      await Promise.all([stop(as), stop(rs)]);
    },
  };
}

/** Verifies a DPoP proof (RFC 9449 §4.3) and returns its key's thumbprint. */
async function checkProof(proof: string, method: string, url: string, accessToken?: string): Promise<string> {
  const { payload, protectedHeader } = await jwtVerify(proof, EmbeddedJWK, {
    typ: "dpop+jwt",
    maxTokenAge: "60s",
  });
  if (payload.htm !== method || payload.htu !== url) throw new Error("proof for another request");
  if (accessToken !== undefined) {
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(accessToken));
    if (payload.ath !== Buffer.from(digest).toString("base64url")) throw new Error("proof for another token");
  }
  return calculateJwkThumbprint(protectedHeader.jwk as JWK, "sha256");
}

function basicClient(header: string | null): { id: string; secret: string } | undefined {
  if (header === null || !header.startsWith("Basic ")) return undefined;
  const [id = "", secret = ""] = Buffer.from(header.slice(6), "base64").toString().split(":");
  return { id: decodeURIComponent(id), secret: decodeURIComponent(secret) };
}

async function listen(): Promise<Server> {
  const http = createServer();
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return http;
}

function origin(http: Server): string {
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
}

async function stop(http: Server): Promise<void> {
  http.closeAllConnections();
  await new Promise<void>((resolve) => http.close(() => resolve()));
}
