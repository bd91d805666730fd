import type { ConnectSignInOptions } from "../credentials/connect-sign-in.js";
import type { Authenticator } from "../fronts/authenticator.js";

/**
 * The connect pages' check of a signed-in browser (`ConnectSignInOptions.verify`) by the
 * gateway's own authenticator (given once the HTTP front has it): the token presented as a
 * caller's would be, for the gateway's resource.
 */
export function verifyWith(authenticator: () => Authenticator | undefined): ConnectSignInOptions["verify"] {
  return async (token, resource, signal) => {
    const current = authenticator();
    if (current === undefined) return undefined;
    const outcome = await current.authenticate(
      {
        headers: { authorization: `Bearer ${token}`, host: new URL(resource).host },
        remoteAddress: undefined,
        path: "/connect",
      },
      signal,
    );
    if (!outcome.ok || outcome.identity.via !== "oauth" || outcome.identity.subject === undefined)
      return undefined;
    const { issuer, subject } = outcome.identity;
    return { subject, ...(issuer === undefined ? {} : { issuer }) };
  };
}
