import { createHmac, randomBytes } from "node:crypto";
import type { McplexConfig, ServerConfig } from "../config/types.js";
import { ConnectFlow } from "../credentials/connect-flow.js";
import { ConnectLinks } from "../credentials/connect-links.js";
import { ConnectSignIn } from "../credentials/connect-sign-in.js";
import { ConnectSignal, connectWaiter } from "../credentials/connect-signal.js";
import { credentialRouter } from "../credentials/credential-router.js";
import { disconnect } from "../credentials/disconnect.js";
import { perUserSource } from "../credentials/per-user-source.js";
import { TokenExchangeSource } from "../credentials/token-exchange.js";
import type { CredentialVault, UserCredentialSource, UserRef } from "../credentials/user-credentials.js";
import type { RevokeOutcome } from "../dashboard/user-connections.js";
import { McplexError } from "../errors.js";
import type { Authenticator } from "../fronts/authenticator.js";
import type { ConnectPages } from "../fronts/connect-pages.js";
import type { Interceptor } from "../hub/call-pipeline.js";
import { verifyWith } from "./verify-with.js";

/** What {@link gatewayCredentials} is given. */
export interface GatewayCredentialsOptions {
  config: McplexConfig;
  /** Where the users' records are kept. Default: Redis with `cluster`, else the file vault beside the secret store. */
  vault?: CredentialVault;
  /**
   * The replica's cluster: its vault in Redis, the key every replica signs connect links with,
   * and the single-use claims that make a link used on one replica used on all.
   */
  cluster?: {
    credentialVault(): CredentialVault;
    readonly connectKey: Buffer;
    claimState(state: string, ttlMs: number): Promise<boolean>;
  };
  /**
   * The HTTP front's authenticator, once it exists: the connect pages check with it the access
   * token their browser signed in with, as the gateway checks a caller's.
   */
  authenticator: () => Authenticator | undefined;
  /**
   * Where the HTTP front listens, once it does: the origin of connect links when `auth.resource`
   * names none.
   */
  frontOrigin: () => string | undefined;
  /** The configured server of a name (the config may be reloaded). */
  server: (name: string) => ServerConfig | undefined;
}

/** The per-user pieces of a gateway, made once and handed to the hub, the gateway, the front and the dashboard. */
export interface GatewayCredentials {
  vault: CredentialVault;
  /** The hub's `userCredentials`: per-user OAuth and values from the vault, token exchange at the user's provider. */
  source: UserCredentialSource;
  /** The hub's `connectUrl`: the link a user who has not connected is sent to. */
  connectUrl: (user: UserRef, server: string) => string;
  /** The gateway layer that turns `CONNECT_REQUIRED` into a URL elicitation (or a tool error with the link). */
  prompt: Interceptor;
  /** The HTTP front's `/connect/<server>` pages. */
  pages: ConnectPages;
  /**
   * Ends a user's connections (to `server`, or all): revokes at the server where it offers
   * revocation, deletes the vault's records, forgets exchanged tokens, and closes the user's live
   * connections through `closeUser` (the hub's, set once the hub exists).
   */
  revoke: (userKey: string, server?: string) => Promise<RevokeOutcome>;
  /** The hub's `closeUser`, given once the hub is made. */
  closeUser?: (userKey: string, server?: string) => Promise<unknown>;
}

/**
 * Everything per-user calls need in a gateway (`credentials:` other than `shared`), wired
 * together: the connect links and pages, the sources of plans, the prompt layer and revoking.
 * Loaded by `serve()` only when a server asks for it.
 */
export async function gatewayCredentials(options: GatewayCredentialsOptions): Promise<GatewayCredentials> {
  const { config, cluster } = options;
  const auth = config.auth;
  if (auth === undefined)
    throw new McplexError(
      "CONFIG_INVALID",
      "per-user credentials need users who sign in: add an auth: block",
      {
        path: "auth",
      },
    );
  const vault =
    options.vault ??
    cluster?.credentialVault() ??
    new (await import("../credentials/file-credential-vault.js")).FileCredentialVault();
  // Every replica takes every replica's links (a key of the cluster secret); else links die with the process.
  const secret = cluster?.connectKey.toString("base64url");
  const resource = auth.resource;
  const links = new ConnectLinks({
    base: () => {
      const origin = resource === undefined ? options.frontOrigin() : new URL(resource).origin;
      if (origin === undefined) throw new Error("connect links need the HTTP front's address");
      return origin;
    },
    secret: secret ?? randomBytes(32).toString("base64url"),
    ...(cluster === undefined ? {} : { claim: (key, ttlMs) => cluster.claimState(key, ttlMs) }),
  });
  const signIn = new ConnectSignIn({ links, auth, verify: verifyWith(options.authenticator) });
  const signal = new ConnectSignal();
  const flow = new ConnectFlow({ vault, links, signal });
  const { connectPages } = await import("../fronts/connect-pages.js");
  const { connectPrompt } = await import("../interceptors/connect-prompt.js");
  const issuers = auth.issuers.map((i) => i.issuer);
  const exchange = issuers.length === 0 ? undefined : new TokenExchangeSource({ issuers });
  const source = credentialRouter({
    perUser: perUserSource({ vault, links }),
    ...(exchange === undefined ? {} : { exchange }),
  });
  const credentials: GatewayCredentials = {
    vault,
    source,
    connectUrl: (user, server) => links.connectUrl(user, server),
    prompt: connectPrompt({
      waitConnected: connectWaiter(links, signal, { vault }),
      // Its own key, the same on every replica: a state it signs is never one of another purpose.
      ...(secret === undefined
        ? {}
        : { stateKey: createHmac("sha256", secret).update("connect-prompt").digest() }),
    }),
    pages: connectPages({ flow, links, signIn, server: options.server }),
    revoke: async (userKey, server) => {
      const servers = await disconnect(userKey, server, {
        vault,
        server: options.server,
        closeUser: async (user, name) => {
          await credentials.closeUser?.(user, name);
        },
      });
      // Exchanged tokens are kept in memory, not in the vault: forgotten here.
      const config = server === undefined ? undefined : options.server(server);
      if (exchange !== undefined && (server === undefined || typeof config?.credentials === "object"))
        exchange.forget(userKey, config);
      return { servers };
    },
  };
  return credentials;
}
