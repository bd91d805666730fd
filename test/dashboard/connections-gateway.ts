import { gatewaySignIn } from "../../src/auth/gateway-sign-in.js";
import { parseConfig } from "../../src/config/parse-config.js";
import type { DashboardCredentials } from "../../src/dashboard/connections-api.js";
import { dashboardPageWith } from "../../src/dashboard/dashboard.js";
import { type HttpFront, startHttpFront } from "../../src/fronts/http-front.js";
import { Gateway } from "../../src/gateway/gateway.js";
import { Hub } from "../../src/hub/hub.js";
import { COMMANDS, yamlConfig } from "../support/gateway.js";
import type { AuthServer, TestUser } from "../support/oidc-provider.js";

/** Who signs in: two users and an operator (group `ops`). */
export const USERS: TestUser[] = [
  { sub: "alice", email: "alice@example.com", groups: ["eng"] },
  { sub: "bob", email: "bob@example.com", groups: ["sales"] },
  { sub: "carol", email: "carol@example.com", groups: ["ops"] },
];
/** A static token bound to no profile: an operator. */
export const OPERATOR_TOKEN = "operator-token-0123456789abcdef0123456789";
/** A static token bound to a profile: not an operator. */
export const PROFILE_TOKEN = "sales-token-0123456789abcdef0123456789abcd";

/** A gateway with sign-in at `as` and the dashboard's per-user connection endpoints. */
export interface ConnectionsGateway {
  readonly origin: string;
  readonly front: HttpFront;
  close(): Promise<void>;
}

/**
 * Starts a hub, a gateway and an HTTP front with the dashboard as `serve()` wires them with an
 * `auth:` block, the dashboard given `credentials` (absent: the endpoints answer 501).
 */
export async function startConnectionsGateway(
  as: AuthServer,
  credentials: DashboardCredentials | undefined,
  options: { clientId?: string } = {},
): Promise<ConnectionsGateway> {
  const yaml = yamlConfig(
    { fx: COMMANDS.fixture },
    `profiles:
  sales:
    servers: [fx]
tokens:
  - token: ${OPERATOR_TOKEN}
  - token: ${PROFILE_TOKEN}
    profile: sales
auth:
  issuers:
    - issuer: ${as.issuer}
  scopes: [mcp:tools]
  access:
    - when: { groups: [ops] }
      operator: true
    - when: { groups: [eng, sales] }
${options.clientId === undefined ? "" : `  dashboard:\n    clientId: ${options.clientId}\n`}`,
  );
  const config = parseConfig(yaml, { source: "connections.yaml", env: {} });
  const hub = new Hub({ config });
  const starting = hub.start();
  const gateway = new Gateway(hub, { ready: starting });
  // What serve() does with config.auth (src/assembly/serve.ts), plus the credentials it will pass.
  const authenticator = gatewaySignIn(config.auth!, {
    tokens: config.tokens,
    host: "127.0.0.1",
    onEvent: () => {},
  });
  const front = await startHttpFront(gateway, {
    host: "127.0.0.1",
    port: 0,
    dashboard: dashboardPageWith({
      signIn: config.auth!,
      ...(credentials === undefined ? {} : { credentials }),
    }),
    tokens: config.tokens,
    authenticator,
  });
  await starting;
  const origin = front.url.replace(/\/mcp$/, "");
  as.setResource(origin, { scopes: ["mcp:tools"] });
  return {
    origin,
    front,
    async close() {
      await front.close(0);
      gateway.close();
      await hub.close();
    },
  };
}
