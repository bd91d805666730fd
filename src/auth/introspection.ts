import { fetchJson, ProviderUnreachable } from "./fetch-json.js";

/** What introspection needs of an issuer: where, and as which client. */
export interface IntrospectionClient {
  endpoint: () => Promise<string>;
  clientId: string;
  clientSecret?: string;
}

/**
 * Asks the issuer about an opaque token (RFC 7662): its claims when it is active, `undefined`
 * when the issuer says it is not (expired, revoked, unknown) or refuses to look at it (400).
 * The client authenticates with HTTP Basic (`client_secret_basic`), or names itself in the
 * body when it has no secret.
 *
 * @throws ProviderUnreachable when the issuer does not answer as RFC 7662 says.
 */
export async function introspect(
  client: IntrospectionClient,
  token: string,
): Promise<Record<string, unknown> | undefined> {
  const body = new URLSearchParams({ token, token_type_hint: "access_token" });
  const headers: Record<string, string> = {};
  if (client.clientSecret === undefined) body.set("client_id", client.clientId);
  else {
    // RFC 6749 §2.3.1: both parts form-encoded before Base64.
    const basic = `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`;
    headers.authorization = `Basic ${Buffer.from(basic).toString("base64")}`;
  }
  let answer: Record<string, unknown>;
  try {
    answer = await fetchJson(await client.endpoint(), { body, headers });
  } catch (error) {
    // A 400 refuses this token, not the request: the issuer answered (oidc-provider says
    // `unsupported_token_type` to a JWE-shaped one). It is not active; the issuer is not away.
    if (error instanceof ProviderUnreachable && error.status === 400) return undefined;
    throw error;
  }
  return answer.active === true ? answer : undefined;
}
