import type { Authorize } from "../../src/upstream/oauth.js";

/**
 * The user's browser, approving at once: the authorization endpoints of the test servers
 * (the OAuth fixture, the conformance suite's) redirect straight back with the code, which
 * is read off the redirect, with `iss` when given.
 */
export const approveAtOnce: Authorize = async (url) => {
  const response = await fetch(url, { redirect: "manual" });
  const location = response.headers.get("location");
  if (location === null)
    throw new Error(`the authorization endpoint did not redirect (HTTP ${response.status})`);
  const back = new URL(location);
  const code = back.searchParams.get("code");
  if (code === null) throw new Error(`no code in the redirect: ${location}`);
  const iss = back.searchParams.get("iss");
  return iss === null ? { code } : { code, iss };
};
