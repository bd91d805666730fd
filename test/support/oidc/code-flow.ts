/**
 * The client's side of the authorization-code flow at the test authorization server, over
 * plain HTTP: dynamic registration of a public client (RFC 7591), the authorization request
 * with PKCE S256, `state` and `resource` (RFC 8707), and the token requests.
 */
import { createHash, randomBytes } from "node:crypto";
import { type CookieJar, TEST_REDIRECT_URI } from "./user-agent.js";

/** A public client registered at the server (RFC 7591). */
export interface RegisteredClient {
  clientId: string;
  /** Only for confidential clients. */
  clientSecret?: string;
  redirectUri: string;
}

/** What a sign-in asks for (`AuthServer.signIn`). */
export interface SignInOptions {
  /** The `sub` of one of the server's users. */
  user: string;
  /** The resource indicator (RFC 8707): the token's audience, e.g. mcplex's `/mcp` URL. */
  resource: string;
  /** Scopes asked (resource scopes and OpenID ones such as `openid`); default `mcp:tools`. */
  scopes?: string[];
  /** A client registered before; default a new public client, registered dynamically. */
  client?: RegisteredClient;
  /** The user agent's cookies; pass one jar to several sign-ins to keep the user's session. */
  jar?: CookieJar;
  signal?: AbortSignal;
}

/** The token endpoint's answer to a sign-in. */
export interface SignInResult {
  accessToken: string;
  tokenType: string;
  expiresIn: number;
  /** The scopes granted for the resource, space-separated. */
  scope: string;
  refreshToken?: string;
  idToken?: string;
  /** The client the sign-in used (for a step-up or a refresh with the same one). */
  client: RegisteredClient;
  resource: string;
}

/** A sign-in begun (`AuthServer.beginSignIn`): where to send the user, and how to end it. */
export interface PendingSignIn {
  /** The authorization request; the user's pages end in a redirect to `client.redirectUri`. */
  url: URL;
  client: RegisteredClient;
  /** Takes the redirect's query (`code`, `state`, `iss`; or `error`) and exchanges the code. */
  finish(callback: URLSearchParams): Promise<SignInResult>;
}

/** Where the flow goes: the server's issuer and endpoints. */
export interface FlowEndpoints {
  issuer: string;
  authorization: string;
  token: string;
  registration: string;
}

/** Registers a public client (`token_endpoint_auth_method: none`), with `metadata` over the defaults. */
export async function registerPublicClient(
  at: FlowEndpoints,
  metadata: Record<string, unknown> = {},
): Promise<RegisteredClient> {
  const response = await fetch(at.registration, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: "mcplex test client",
      application_type: "native",
      redirect_uris: [TEST_REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      ...metadata,
    }),
    signal: AbortSignal.timeout(15_000),
  });
  const body = (await response.json()) as Record<string, unknown>;
  if (response.status !== 201)
    throw new Error(`client registration failed (${response.status}): ${JSON.stringify(body)}`);
  const redirectUris = body.redirect_uris as string[];
  return {
    clientId: String(body.client_id),
    ...(typeof body.client_secret === "string" ? { clientSecret: body.client_secret } : {}),
    redirectUri: redirectUris[0] ?? TEST_REDIRECT_URI,
  };
}

/** Builds the authorization request (registering a client unless one is given). */
export async function beginCodeFlow(
  at: FlowEndpoints,
  options: Omit<SignInOptions, "user" | "jar">,
): Promise<PendingSignIn> {
  const client = options.client ?? (await registerPublicClient(at));
  const verifier = randomBytes(32).toString("base64url");
  const state = randomBytes(16).toString("base64url");
  const scopes = options.scopes ?? ["mcp:tools"];
  const url = new URL(at.authorization);
  url.search = new URLSearchParams({
    client_id: client.clientId,
    response_type: "code",
    redirect_uri: client.redirectUri,
    scope: scopes.join(" "),
    resource: options.resource,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    state,
  }).toString();
  // OpenID Connect keeps offline_access (a refresh token) only when consent is asked for.
  if (scopes.includes("offline_access")) url.searchParams.set("prompt", "consent");
  const finish = async (back: URLSearchParams): Promise<SignInResult> => {
    const error = back.get("error");
    if (error !== null) throw new Error(`sign-in refused: ${error}: ${back.get("error_description") ?? ""}`);
    if (back.get("state") !== state) throw new Error("sign-in: the redirect's state is not the request's");
    if (back.get("iss") !== at.issuer) throw new Error(`sign-in: the redirect's iss is ${back.get("iss")}`);
    const tokens = await requestTokens(
      at,
      {
        grant_type: "authorization_code",
        code: back.get("code") ?? "",
        redirect_uri: client.redirectUri,
        code_verifier: verifier,
        client_id: client.clientId,
        resource: options.resource,
      },
      options.signal,
    );
    return resultOf(tokens, client, options.resource);
  };
  return { url, client, finish };
}

/** Spends a sign-in's refresh token for a new access token for the same resource. */
export async function refreshSignIn(
  at: FlowEndpoints,
  previous: SignInResult,
  signal?: AbortSignal,
): Promise<SignInResult> {
  if (previous.refreshToken === undefined)
    throw new Error("refresh: the sign-in got no refresh token (ask offline_access)");
  const tokens = await requestTokens(
    at,
    {
      grant_type: "refresh_token",
      refresh_token: previous.refreshToken,
      client_id: previous.client.clientId,
      resource: previous.resource,
    },
    signal,
  );
  return resultOf(tokens, previous.client, previous.resource);
}

async function requestTokens(
  at: FlowEndpoints,
  params: Record<string, string>,
  signal?: AbortSignal,
): Promise<Record<string, unknown>> {
  const response = await fetch(at.token, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(params).toString(),
    signal: signal ?? AbortSignal.timeout(15_000),
  });
  const body = (await response.json()) as Record<string, unknown>;
  if (response.status !== 200) throw new Error(`token endpoint: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

function resultOf(tokens: Record<string, unknown>, client: RegisteredClient, resource: string): SignInResult {
  return {
    accessToken: String(tokens.access_token),
    tokenType: String(tokens.token_type),
    expiresIn: Number(tokens.expires_in),
    scope: typeof tokens.scope === "string" ? tokens.scope : "",
    ...(typeof tokens.refresh_token === "string" ? { refreshToken: tokens.refresh_token } : {}),
    ...(typeof tokens.id_token === "string" ? { idToken: tokens.id_token } : {}),
    client,
    resource,
  };
}
