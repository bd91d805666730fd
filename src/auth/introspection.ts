import { fetchJson } from "./fetch-json.js";

/** What introspection needs of an issuer: where, and as which client. */
export interface IntrospectionClient {
  endpoint: () => Promise<string>;
  clientId: string;
  clientSecret?: string;
}

/**
 * Asks the issuer about an opaque token (RFC 7662): its claims when it is active, `undefined`
 * when the issuer says it is not (expired, revoked, unknown). The client authenticates with
 * HTTP Basic (`client_secret_basic`), or names itself in the body when it has no secret.
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
  const answer = await fetchJson(await client.endpoint(), { body, headers });
  return answer.active === true ? answer : undefined;
}
