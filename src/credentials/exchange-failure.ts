import type { TokenExchangeConfig } from "../config/types.js";
import { McplexError } from "../errors.js";
import { reasonOf } from "./exchange-provider.js";

/** Where an exchange was asked: the server it was for, the provider, the server's settings. */
export interface ExchangeAt {
  server: string;
  issuer: string;
  config: TokenExchangeConfig;
}

/**
 * The provider refused the exchange: what the user and the operator read is the server, the
 * provider and the provider's own answer (`error: error_description`), with a hint for that
 * answer. `subject` is cut out of the provider's text should it quote it; no token is ever in it.
 */
export function exchangeRefused(
  at: ExchangeAt,
  answer: { error: string; description?: string },
  subject: string,
): McplexError {
  const said = answer.description === undefined ? answer.error : `${answer.error}: ${answer.description}`;
  return new McplexError(
    "TOKEN_EXCHANGE_FAILED",
    `${at.server}: the identity provider ${at.issuer} refused to exchange your token: ${scrub(said, subject)}`,
    { server: at.server, hint: hintFor(at, answer.error) },
  );
}

/** The provider could not be asked (down, slow, or answered with something that is not OAuth). */
export function exchangeUnreachable(at: Pick<ExchangeAt, "server" | "issuer">, error: unknown): McplexError {
  return new McplexError(
    "TOKEN_EXCHANGE_FAILED",
    `${at.server}: could not exchange your token at the identity provider ${at.issuer}: ${reasonOf(error)}`,
    {
      server: at.server,
      retryable: true,
      hint: `Check that ${at.issuer} is up and reachable from mcplex (\`mcplex doctor\` checks its metadata).`,
    },
  );
}

function hintFor(at: ExchangeAt, error: string): string {
  const { clientId, audience } = at.config;
  switch (error) {
    case "invalid_client":
    case "unauthorized_client":
      return `Check credentials.exchange.clientId and clientSecret of ${at.server}, and that the provider lets the client ${clientId} use token exchange.`;
    case "invalid_grant":
      return "Your sign-in token was not accepted for exchange (expired, or of another provider): sign in again.";
    case "invalid_target":
    case "invalid_scope":
      return `Ask the provider's administrator to let the client ${clientId} exchange tokens for ${audience} with these scopes, or correct credentials.exchange of ${at.server}.`;
    case "access_denied":
      return `The provider does not let your account reach ${audience} through mcplex; ask its administrator.`;
    default:
      return `Check that ${at.issuer} allows token exchange (RFC 8693) for the client ${clientId} and the audience ${audience}.`;
  }
}

/** A provider's text, without the token it was sent, should it quote it back. */
export function scrub(text: string, secret: string): string {
  return secret.length >= 8 ? text.split(secret).join("[token]") : text;
}
