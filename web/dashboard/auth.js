// The credential the page sends, in the Authorization header only (the gateway never reads
// cookies, and the page sends none to it): a signed-in user's access token, kept in this
// module's variable alone (not in any storage: a reload signs in again), or a static token
// pasted once and kept for the tab (sessionStorage), on a gateway that asks for one.

const TOKEN_KEY = "mcplex.dashboard.token";

/** The signed-in user's access token (sign-in.js), or undefined. */
let accessToken;

/** The token in use, or undefined when the gateway asks for none (or none was given yet). */
export function currentToken() {
  return accessToken ?? sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

/** Keeps a static `token` for this tab. */
export function setToken(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

/** Uses a signed-in user's access token from now on, in memory only. */
export function setAccessToken(token) {
  accessToken = token;
}

/** The signed-in user's access token, or undefined (a static token or none in use). */
export function signedInToken() {
  return accessToken;
}

/** Forgets every credential the page holds (signing out). */
export function forgetTokens() {
  accessToken = undefined;
  sessionStorage.removeItem(TOKEN_KEY);
}

/** The headers that authenticate a request to the gateway. */
export function authHeaders() {
  const token = currentToken();
  return token === undefined ? {} : { authorization: `Bearer ${token}` };
}
