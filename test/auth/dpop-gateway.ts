/**
 * An in-process gateway whose `auth:` trusts the test authorization server, for the DPoP tests
 * (dpop-sign-in.test.ts, dpop-proofs.hostile.test.ts): built as `serve()` builds one (parseConfig,
 * Hub, Gateway, gatewaySignIn, startHttpFront), with an `auth.dpop` block of the test's and, for
 * replicas, the DPoP sharing a cluster hands it (src/assembly/build-fronts.ts).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DpopSession } from "@modelcontextprotocol/client";
import { gatewaySignIn } from "../../src/auth/gateway-sign-in.js";
import type { DpopSharing } from "../../src/auth/oauth-authenticator.js";
import { OAuthAuthenticator } from "../../src/auth/oauth-authenticator.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { type HttpFront, startHttpFront } from "../../src/fronts/http-front.js";
import { Gateway } from "../../src/gateway/gateway.js";
import { Hub } from "../../src/hub/hub.js";
import { ANSWERING_CAPABILITIES } from "../../src/protocol/server-requests.js";
import { COMMANDS } from "../support/gateway.js";
import type { AuthServer } from "../support/oidc-provider.js";
import { type TestClientProviderOptions, TestOAuthClientProvider } from "../support/oidc-provider.js";

/** A running gateway with sign-in, its authenticator in hand. */
export interface DpopGateway {
  /** `http://127.0.0.1:<port>`, where the test connects. */
  readonly origin: string;
  readonly front: HttpFront;
  readonly authenticator: OAuthAuthenticator;
  /** What the gateway reported (its log lines). */
  readonly events: string[];
  /** The tags of the fixture's `mark` calls that ran (from its `FIXTURE_LOG`), to see a refused one did not. */
  marks(): Promise<string[]>;
  close(): Promise<void>;
}

/** Starts a gateway trusting `issuer`, with `dpop` as its `auth.dpop` block (YAML, indented). */
export async function startDpopGateway(options: {
  issuer: string;
  /** The `auth.dpop:` block's body, or undefined for none. */
  dpop?: string;
  /** `auth.resource`: the URL the proofs' `htu` name (a proxy's); default the bound origin. */
  resource?: string;
  sharing?: DpopSharing;
  /** The resource server's client at the issuer, for opaque tokens (RFC 7662). */
  introspection?: { clientId: string; clientSecret: string };
  /** Static tokens (`tokens:`) beside sign-in. */
  tokens?: string[];
}): Promise<DpopGateway> {
  const tokens = (options.tokens ?? []).map((token) => `  - token: ${token}\n`).join("");
  const introspection =
    options.introspection === undefined
      ? ""
      : `      introspection:\n        clientId: ${options.introspection.clientId}\n        clientSecret: ${options.introspection.clientSecret}\n`;
  const dpop = options.dpop === undefined ? "" : `  dpop:\n${options.dpop.replace(/^/gm, "    ")}\n`;
  const resource = options.resource === undefined ? "" : `  resource: ${options.resource}\n`;
  const dir = await mkdtemp(join(tmpdir(), "mcplex-dpop-"));
  const log = join(dir, "fixture.log");
  const yaml = `servers:
  fx:
    command: ${JSON.stringify(COMMANDS.fixture.command)}
    args: ${JSON.stringify(COMMANDS.fixture.args)}
    env:
      FIXTURE_LOG: ${JSON.stringify(log)}
${tokens === "" ? "" : `tokens:\n${tokens}`}auth:
${resource}  issuers:
    - issuer: ${options.issuer}
${introspection}  scopes: [mcp:tools]
${dpop}`;
  const config = parseConfig(yaml, { source: "dpop.yaml", env: {} });
  const hub = new Hub({ config, clientCapabilities: ANSWERING_CAPABILITIES });
  const starting = hub.start();
  const gateway = new Gateway(hub, { ready: starting });
  const events: string[] = [];
  const authenticator = gatewaySignIn(config.auth!, {
    tokens: config.tokens,
    host: "127.0.0.1",
    onEvent: (message) => events.push(message),
    ...(options.sharing === undefined ? {} : { dpop: options.sharing }),
  });
  if (!(authenticator instanceof OAuthAuthenticator)) throw new Error("auth: made no OAuthAuthenticator");
  const front = await startHttpFront(gateway, {
    host: "127.0.0.1",
    port: 0,
    tokens: config.tokens,
    authenticator,
  });
  await starting;
  return {
    origin: front.url.replace(/\/mcp$/, ""),
    front,
    authenticator,
    events,
    async marks() {
      const text = await readFile(log, "utf8").catch(() => "");
      return text.split("\n").flatMap((line) => /\bran (\S+)/.exec(line)?.[1] ?? []);
    },
    async close() {
      await front.close(0);
      gateway.close();
      await hub.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The test client provider with DPoP on (`OAuthClientProvider.dpop()`): the SDK signs a proof
 * into its token requests, so the authorization server binds the tokens to the session's key,
 * and its transports present them as `Authorization: DPoP` with a proof per request.
 */
export class DpopClientProvider extends TestOAuthClientProvider {
  readonly session: DpopSession;

  constructor(session: DpopSession, options: TestClientProviderOptions) {
    super(options);
    this.session = session;
  }

  dpop(): DpopSession {
    return this.session;
  }
}

/** A provider of {@link DpopClientProvider} signing `user` in at `as`, with a fresh key. */
export async function dpopClientProvider(as: AuthServer, user: string): Promise<DpopClientProvider> {
  return new DpopClientProvider(await DpopSession.create(), {
    user,
    approve: (url, approveOptions) => as.approve(url, approveOptions),
  });
}
