import type { DpopSession, FetchLike, StoredOAuthTokens } from "@modelcontextprotocol/client";
import type { OAuthConfig } from "../config/types.js";
import { discoverAssertionTarget, requestJwtBearerTokens } from "./assertion-grant.js";
import { idJagTokens } from "./id-jag.js";
import { readTokenSource } from "./token-source.js";

/** The part of a server's OAuth provider an assertion grant uses. */
export interface AssertionGrantClient {
  readonly server: string;
  readonly config: OAuthConfig;
  dpop(): Promise<DpopSession | undefined>;
  saveTokens(tokens: StoredOAuthTokens): Promise<void>;
}

/** Whether a server's grant is one of the assertion grants, where nobody is asked. */
export function isAssertionGrant(config: OAuthConfig): boolean {
  return config.grant === "jwt-bearer" || config.grant === "id-jag";
}

/**
 * Gets a server's tokens with its assertion grant and stores them: `jwt-bearer` presents the
 * workload's JWT, read from `oauth.assertion` now; `id-jag` exchanges the user's ID token (read
 * from `oauth.idJag.idToken` now) at the identity provider first. One attempt, no fallback.
 */
export async function authorizeWithAssertion(
  client: AssertionGrantClient,
  serverUrl: URL,
  options: { fetchFn?: FetchLike; resourceMetadataUrl?: URL; scope?: string } = {},
): Promise<void> {
  const { server, config } = client;
  const dpop = await client.dpop();
  const base = `servers.${server}.oauth`;
  if (config.grant === "id-jag" && config.idJag !== undefined && config.clientId !== undefined) {
    const { idToken, ...idJag } = config.idJag;
    const subjectToken = await readTokenSource(idToken, { server, path: `${base}.idJag.idToken` });
    const tokens = await idJagTokens({
      server,
      serverUrl,
      subjectToken,
      idJag,
      client: {
        clientId: config.clientId,
        ...(config.clientSecret === undefined ? {} : { clientSecret: config.clientSecret }),
      },
      ...(options.scope === undefined ? {} : { scope: options.scope }),
      ...(config.scope === undefined ? {} : { configuredScope: config.scope }),
      ...(options.resourceMetadataUrl === undefined
        ? {}
        : { resourceMetadataUrl: options.resourceMetadataUrl }),
      ...(dpop === undefined ? {} : { dpop }),
      ...(options.fetchFn === undefined ? {} : { fetchFn: options.fetchFn }),
    });
    await client.saveTokens(tokens);
    return;
  }
  if (config.assertion === undefined)
    throw new Error(`${server}: ${config.grant} has no assertion configured`);
  const target = await discoverAssertionTarget(server, serverUrl, {
    ...options,
    ...(config.scope === undefined ? {} : { configuredScope: config.scope }),
  });
  const assertion = await readTokenSource(config.assertion, { server, path: `${base}.assertion` });
  const tokens = await requestJwtBearerTokens(target, {
    server,
    assertion,
    ...(config.clientId === undefined
      ? {}
      : {
          client: {
            client_id: config.clientId,
            ...(config.clientSecret === undefined ? {} : { client_secret: config.clientSecret }),
          },
        }),
    ...(dpop === undefined ? {} : { dpop }),
    ...(options.fetchFn === undefined ? {} : { fetchFn: options.fetchFn }),
    what: "the workload's JWT",
    invalidGrantHint: `the JWT read from ${base}.assertion is expired, names another audience than ${target.issuer}, or its issuer is not trusted there: check the platform's token and the authorization server's federation`,
  });
  await client.saveTokens({ ...tokens, issuer: target.issuer });
}
