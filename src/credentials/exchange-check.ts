import type { ServerConfig } from "../config/types.js";
import { discoverExchangeProvider, TOKEN_EXCHANGE_GRANT } from "./exchange-provider.js";

/** What `mcplex doctor` found out about one exchange server's identity provider. */
export interface ExchangeReport {
  /** `warn`: the provider does not say whether it exchanges; the first call will tell. */
  readonly status: "ok" | "warn" | "fail";
  readonly server: string;
  readonly message: string;
  readonly hint?: string;
}

/**
 * Asks the identity providers of a `credentials: { exchange }` (or `{ idJag }`, whose ID-JAG is
 * asked for by token exchange too) server what an exchange will
 * ask them: that they are among `auth.issuers` (the only providers users' tokens go to), that
 * their metadata names a token endpoint, and that they advertise the token-exchange grant in
 * `grant_types_supported`. The provider is `exchange.issuer`, or else each of `issuers` (a
 * user's own). Nothing is exchanged: doctor has no user token.
 *
 * @example
 * for (const report of await checkTokenExchange(server, config.auth.issuers.map((i) => i.issuer)))
 *   console.log(report.status, report.message);
 */
export async function checkTokenExchange(
  server: ServerConfig,
  issuers: readonly string[],
): Promise<ExchangeReport[]> {
  const credentials = server.credentials;
  if (typeof credentials !== "object" || credentials === null) return [];
  const key = "exchange" in credentials ? "exchange" : "idJag";
  const { issuer, clientId } = "exchange" in credentials ? credentials.exchange : credentials.idJag;
  const audience = "exchange" in credentials ? credentials.exchange.audience : `ID-JAGs for ${server.name}`;
  if (issuers.length === 0) {
    return [
      {
        status: "fail",
        server: server.name,
        message: `credentials: { ${key} } needs sign-in, and auth.issuers lists no identity provider`,
        hint: "Configure auth: with the issuer your users sign in at (see the README's Sign-in).",
      },
    ];
  }
  if (issuer !== undefined && !issuers.includes(issuer)) {
    return [
      {
        status: "fail",
        server: server.name,
        message: `credentials.${key}.issuer ${issuer} is not one of auth.issuers (${issuers.join(", ")}), and users' tokens are sent to none other`,
        hint: `Add ${issuer} to auth.issuers, or point credentials.${key}.issuer at one of them.`,
      },
    ];
  }
  const providers = issuer === undefined ? issuers : [issuer];
  return Promise.all(providers.map((at) => checkProvider(server.name, at, clientId, audience)));
}

async function checkProvider(
  server: string,
  issuer: string,
  clientId: string,
  audience: string,
): Promise<ExchangeReport> {
  let metadata: Awaited<ReturnType<typeof discoverExchangeProvider>>;
  try {
    metadata = await discoverExchangeProvider(issuer);
  } catch (error) {
    return {
      status: "fail",
      server,
      message: `the identity provider ${issuer} cannot be asked for token exchange: ${(error as Error).message}`,
      hint: "Check the issuer URL (it must equal the tokens' `iss`) and that mcplex reaches it.",
    };
  }
  if (metadata.token_endpoint === undefined) {
    return {
      status: "fail",
      server,
      message: `the identity provider ${issuer} names no token_endpoint in its metadata`,
      hint: "Token exchange is a request to the provider's token endpoint: use a provider that has one.",
    };
  }
  const grants = metadata.grant_types_supported;
  if (grants === undefined) {
    return {
      status: "warn",
      server,
      message: `the identity provider ${issuer} does not list grant_types_supported, so whether it exchanges tokens (RFC 8693) shows only at the first call`,
      hint: `Make sure the provider lets the client ${clientId} exchange tokens for ${audience}.`,
    };
  }
  if (!grants.includes(TOKEN_EXCHANGE_GRANT)) {
    return {
      status: "fail",
      server,
      message: `the identity provider ${issuer} does not offer token exchange: its grant_types_supported (${grants.join(", ")}) lacks ${TOKEN_EXCHANGE_GRANT}`,
      hint: `Enable RFC 8693 token exchange at the provider for the client ${clientId} and the audience ${audience}, or use credentials: per-user for ${server}.`,
    };
  }
  return {
    status: "ok",
    server,
    message: `${issuer} exchanges tokens (RFC 8693) at ${metadata.token_endpoint}; the client ${clientId} asks for ${audience}`,
  };
}
