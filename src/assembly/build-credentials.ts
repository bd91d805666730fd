import { isPerUser } from "../config/read-credentials.js";
import type { GatewayCredentials, GatewayCredentialsOptions } from "./gateway-credentials.js";

/**
 * The per-user pieces of a gateway (see {@link GatewayCredentials}) when users sign in (`auth:`)
 * and a server is called with each user's own credentials (`credentials:`): the vault, connect
 * pages and sources, loaded only then. `undefined` otherwise.
 */
export async function buildCredentials(
  options: GatewayCredentialsOptions,
): Promise<GatewayCredentials | undefined> {
  const { config } = options;
  if (config.auth === undefined || ![...config.servers, ...(config.available ?? [])].some(isPerUser))
    return undefined;
  return (await import("./gateway-credentials.js")).gatewayCredentials(options);
}
