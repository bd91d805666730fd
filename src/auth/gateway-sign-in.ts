import type { AuthConfig, TokenConfig } from "../config/types.js";
import { McplexError } from "../errors.js";
import type { Authenticator } from "../fronts/authenticator.js";
import { isLoopbackHost } from "../fronts/http-guard.js";
import { type DpopSharing, OAuthAuthenticator } from "./oauth-authenticator.js";

/**
 * The `auth:` block at work on a gateway: the OAuth authenticator its HTTP front admits callers
 * with (the static `tokens` beside it). The scopes of `auth.require` are decided with the
 * policies, on the hub's path (`src/interceptors/policy-check.ts`).
 *
 * @throws McplexError (`CONFIG_INVALID`) for a non-loopback `host` without `auth.resource`.
 */
export function gatewaySignIn(
  auth: AuthConfig,
  options: {
    tokens: readonly TokenConfig[];
    host: string;
    onEvent: (message: string) => void;
    /** A cluster's: DPoP proofs' `jti`s and nonces shared by its replicas. */
    dpop?: DpopSharing;
  },
): Authenticator {
  if (auth.resource === undefined && !isLoopbackHost(options.host))
    throw new McplexError(
      "CONFIG_INVALID",
      `auth.resource is required when serving on ${options.host}: tokens name the URL clients reach the gateway at as their audience`,
      { path: "auth.resource", hint: 'set it to that URL without /mcp, such as "https://mcp.example.com"' },
    );
  const authenticator = new OAuthAuthenticator(auth, {
    tokens: options.tokens,
    onEvent: options.onEvent,
    ...(options.dpop === undefined ? {} : { dpop: options.dpop }),
  });
  return authenticator;
}
