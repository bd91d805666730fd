/**
 * The sign-in a connect page asks of its browser, for tests that build the pages themselves:
 * `ConnectSignIn` at a real authorization server (the test's), its tokens checked by a real
 * `OAuthAuthenticator` as the gateway's front checks callers', and the `UserRef` of a user
 * signed in there (the key the pages compare with the ticket's).
 */

import { verifyWith } from "../../../src/assembly/verify-with.js";
import { OAuthAuthenticator } from "../../../src/auth/oauth-authenticator.js";
import { parseConfig } from "../../../src/config/parse-config.js";
import type { ConnectLinks } from "../../../src/credentials/connect-links.js";
import { ConnectSignIn } from "../../../src/credentials/connect-sign-in.js";
import type { UserRef } from "../../../src/credentials/user-credentials.js";
import { userKey } from "../../../src/credentials/user-ref.js";
import type { AuthServer } from "../../support/oidc-provider.js";

/** The sign-in of connect pages whose users sign in at `idp`. */
export function linkSignIn(links: ConnectLinks, idp: AuthServer): ConnectSignIn {
  // The scope the test providers' resources know: a sign-in that asks none is refused there.
  const config = parseConfig(`auth:\n  issuers:\n    - issuer: ${idp.issuer}\n  scopes: ["mcp:tools"]\n`, {
    source: "mcplex.yaml",
    env: {},
  });
  // As the HTTP front does once it listens: the audience accepted is the gateway's own URL.
  let authenticator: OAuthAuthenticator | undefined;
  const bound = () => {
    if (authenticator === undefined) {
      authenticator = new OAuthAuthenticator(config.auth!);
      authenticator.bound([links.base]);
    }
    return authenticator;
  };
  return new ConnectSignIn({ links, auth: config.auth!, verify: verifyWith(bound) });
}

/** `sub` as a user of `idp`, as the gateway knows them. */
export function userAt(idp: AuthServer, sub: string): UserRef {
  return { key: userKey(idp.issuer, sub), subject: sub, issuer: idp.issuer };
}
