// The bearer token the page sends: pasted once, kept for the tab (sessionStorage), and sent
// in the Authorization header only. The gateway never reads cookies.

const TOKEN_KEY = "mcplex.dashboard.token";

/** The token in use, or undefined when the gateway asks for none (or none was given yet). */
export function currentToken() {
  return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

/** Keeps `token` for this tab. */
export function setToken(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

/** The headers that authenticate a request to the gateway. */
export function authHeaders() {
  const token = currentToken();
  return token === undefined ? {} : { authorization: `Bearer ${token}` };
}
