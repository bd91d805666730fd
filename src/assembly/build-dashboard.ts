import type { McplexConfig } from "../config/types.js";
import type { FrontPageFactory } from "../fronts/front-page.js";
import type { GatewayCredentials } from "./gateway-credentials.js";

/**
 * The web dashboard the HTTP front serves at /dashboard (its code loaded only then): with the
 * sign-in of `auth:`, the users' connections to per-user servers when there are any, and the
 * rules of the config at work (`rules`, read again for each page's state after a reload).
 */
export async function buildDashboard(
  config: McplexConfig,
  credentials: GatewayCredentials | undefined,
  rules: () => McplexConfig = () => config,
): Promise<FrontPageFactory> {
  return (await import("../dashboard/dashboard.js")).dashboardPageWith({
    ...(config.auth === undefined ? {} : { signIn: config.auth }),
    rules,
    ...(credentials === undefined
      ? {}
      : {
          credentials: {
            vault: credentials.vault,
            userOf: (await import("../credentials/user-ref.js")).userRefOf,
            revoke: credentials.revoke,
          },
        }),
  });
}
