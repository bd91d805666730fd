import type { ServerMetadata } from "openid-client";
import type { TokenExchangeConfig } from "../config/types.js";

/** The grant type of RFC 8693 token exchange. */
export const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
/** RFC 8693's token type of an OAuth access token: what is sent, and what is asked for. */
export const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";
/** Also usable as a bearer token when the provider says it issued a JWT (RFC 8693 §3). */
const JWT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt";
/** The provider's time to answer one discovery or exchange. */
export const EXCHANGE_TIMEOUT_MS = 10_000;

/** What the provider answered to one exchange. */
export type ExchangeAnswer =
  | {
      kind: "issued";
      token: string;
      /** Seconds, as the provider said (`expires_in`). */
      expiresIn?: number;
    }
  | {
      /** An OAuth error answer: the provider looked at the request and said no. */
      kind: "refused";
      error: string;
      description?: string;
    };

/**
 * An identity provider's metadata, as an exchange finds it: OpenID discovery
 * (`/.well-known/openid-configuration`), then RFC 8414 (`/.well-known/oauth-authorization-server`);
 * openid-client checks that the document names the issuer itself. Plain HTTP only on loopback.
 *
 * @throws Error saying what each way answered.
 */
export async function discoverExchangeProvider(
  issuer: string,
  timeoutMs = EXCHANGE_TIMEOUT_MS,
): Promise<ServerMetadata> {
  const client = await import("openid-client");
  if (new URL(issuer).protocol !== "https:" && !insecureAllowed(issuer)) {
    throw new Error(
      "it is not https: an exchange sends users' tokens and mcplex's client secret, so plain http is taken only on this machine (loopback)",
    );
  }
  const options = {
    timeout: timeoutMs / 1000,
    execute: insecureAllowed(issuer) ? [client.allowInsecureRequests] : [],
  };
  const failures: string[] = [];
  for (const algorithm of ["oidc", "oauth2"] as const) {
    try {
      const found = await client.discovery(new URL(issuer), "mcplex", undefined, client.None(), {
        ...options,
        algorithm,
      });
      return found.serverMetadata();
    } catch (error) {
      failures.push(`${algorithm === "oidc" ? "OpenID discovery" : "RFC 8414 metadata"}: ${reasonOf(error)}`);
    }
  }
  throw new Error(`no metadata (${failures.join("; ")})`);
}

/**
 * Asks the provider (`metadata`, discovered) to exchange `subject` (RFC 8693) as `config` says,
 * authenticated as `config.clientId` (client_secret_basic, or none without a secret), with
 * openid-client's `genericGrantRequest`. Resolves with the token or the provider's refusal.
 *
 * @throws Error when the provider could not be asked or did not answer as OAuth says (the
 *   caller words it; see `exchangeUnreachable`).
 */
export async function requestExchange(
  metadata: ServerMetadata,
  config: TokenExchangeConfig,
  subject: string,
  timeoutMs = EXCHANGE_TIMEOUT_MS,
): Promise<ExchangeAnswer> {
  const parameters: Record<string, string> = {
    subject_token: subject,
    subject_token_type: ACCESS_TOKEN_TYPE,
    requested_token_type: ACCESS_TOKEN_TYPE,
    audience: config.audience,
  };
  if (config.resource !== undefined) parameters.resource = config.resource;
  if (config.scopes !== undefined && config.scopes.length > 0) parameters.scope = config.scopes.join(" ");
  const answer = await grantRequest(metadata, config, TOKEN_EXCHANGE_GRANT, parameters, timeoutMs);
  if (answer.kind === "refused") return answer;
  const { issued, tokenType } = answer;
  if (
    tokenType.toLowerCase() !== "bearer" ||
    (issued !== undefined && issued !== ACCESS_TOKEN_TYPE && issued !== JWT_TOKEN_TYPE)
  ) {
    throw new Error(`the provider issued a ${String(issued ?? tokenType)} token, not a bearer access token`);
  }
  return {
    kind: "issued",
    token: answer.token,
    ...(answer.expiresIn === undefined ? {} : { expiresIn: answer.expiresIn }),
  };
}

/** What {@link grantRequest} resolves with: a token (with its types, as the provider said) or a refusal. */
export type GrantAnswer =
  | {
      kind: "issued";
      token: string;
      tokenType: string;
      /** `issued_token_type` (RFC 8693), when the provider says it. */
      issued?: string;
      expiresIn?: number;
    }
  | Extract<ExchangeAnswer, { kind: "refused" }>;

/**
 * One grant request at the token endpoint of `metadata` (openid-client's `genericGrantRequest`),
 * authenticated as `client` (client_secret_basic, or none without a secret). An OAuth error
 * answer resolves as `refused`; anything else that goes wrong throws.
 */
export async function grantRequest(
  metadata: ServerMetadata,
  client: { clientId: string; clientSecret?: string | undefined },
  grantType: string,
  parameters: Record<string, string>,
  timeoutMs = EXCHANGE_TIMEOUT_MS,
): Promise<GrantAnswer> {
  const oidc = await import("openid-client");
  const { clientId, clientSecret } = client;
  const configuration = new oidc.Configuration(
    metadata,
    clientId,
    clientSecret === undefined ? undefined : { client_secret: clientSecret },
    clientSecret === undefined ? oidc.None() : oidc.ClientSecretBasic(clientSecret),
  );
  configuration.timeout = timeoutMs / 1000;
  if (insecureAllowed(metadata.issuer)) oidc.allowInsecureRequests(configuration);
  let answer: Awaited<ReturnType<typeof oidc.genericGrantRequest>>;
  try {
    answer = await oidc.genericGrantRequest(configuration, grantType, parameters);
  } catch (error) {
    if (error instanceof oidc.ResponseBodyError) {
      return {
        kind: "refused",
        error: error.error,
        ...(error.error_description === undefined ? {} : { description: error.error_description }),
      };
    }
    if (error instanceof oidc.WWWAuthenticateChallengeError) {
      // A 401 with a challenge (a client authentication the provider did not take).
      const challenge = error.cause[0]?.parameters;
      return {
        kind: "refused",
        error: challenge?.error ?? `HTTP ${error.status}`,
        ...(challenge?.error_description === undefined ? {} : { description: challenge.error_description }),
      };
    }
    throw error;
  }
  return {
    kind: "issued",
    token: answer.access_token,
    tokenType: answer.token_type,
    ...(typeof answer.issued_token_type === "string" ? { issued: answer.issued_token_type } : {}),
    ...(typeof answer.expires_in === "number" ? { expiresIn: answer.expires_in } : {}),
  };
}

/**
 * Plain HTTP only to a provider on this machine: an exchange sends the user's token and
 * mcplex's client secret, which must not cross a network in clear.
 */
function insecureAllowed(issuer: string): boolean {
  const url = new URL(issuer);
  if (url.protocol !== "http:") return false;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Why a request to the provider failed, in a few words (never a credential). */
export function reasonOf(error: unknown): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError"))
    return "no answer in time";
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === "string") return cause.code;
  return error instanceof Error ? error.message : String(error);
}
