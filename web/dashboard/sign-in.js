// Signing the page's user in at the gateway's identity provider, from the browser, when the
// gateway has an `auth:` block: the gateway's 401 names its protected-resource metadata (RFC
// 9728), which names the authorization server; its metadata (RFC 8414, or OpenID discovery)
// gives the endpoints; the page uses the client the gateway names, or registers one (RFC 7591,
// a public client); then the authorization code flow with PKCE S256, `state` and `resource` =
// the gateway (RFC 8707), back to this page, and the code exchanged with fetch.
// Only what the round trip needs (the PKCE verifier, the state) waits in sessionStorage, and
// is deleted when the page comes back; the access token is never stored (see auth.js).

const PENDING_KEY = "mcplex.dashboard.sign-in";
/** Set when the user signed out: the page then waits for them to sign in again. */
const SIGNED_OUT_KEY = "mcplex.dashboard.signed-out";
/** Clients the page registered itself, by issuer and redirect URI: public ids, not credentials. */
const CLIENTS_KEY = "mcplex.dashboard.clients";

/** Why signing in did not work, in words for the person at the page. */
export class SignInError extends Error {
  constructor(message) {
    super(message);
    this.name = "SignInError";
  }
}

/**
 * The sign-in challenge of a 401 or 403 from the gateway (`WWW-Authenticate: Bearer
 * resource_metadata="...", scope="..."`), or undefined when it asks for a static token instead.
 */
export function signInChallenge(response) {
  const header = response.headers.get("www-authenticate") ?? "";
  if (!/^bearer\s/i.test(header)) return undefined;
  const params = {};
  for (const [, name, value] of header.matchAll(/([A-Za-z_]+)="([^"]*)"/g))
    params[name.toLowerCase()] = value;
  if (params.resource_metadata === undefined && params.error !== "insufficient_scope") return undefined;
  return { resourceMetadata: params.resource_metadata, scope: params.scope, error: params.error };
}

/** Whether the user signed out in this tab (and has not signed in since). */
export function signedOut() {
  return sessionStorage.getItem(SIGNED_OUT_KEY) !== null;
}

/** Remembers that the user signed out, so that the page does not sign them in again by itself. */
export function markSignedOut() {
  sessionStorage.setItem(SIGNED_OUT_KEY, "1");
}

/** This page's address as the provider sends the user back to it. */
function redirectUri() {
  return `${location.origin}/dashboard`;
}

async function getJson(url, what) {
  let response;
  try {
    response = await fetch(url, {
      headers: { accept: "application/json" },
      cache: "no-store",
      credentials: "omit",
    });
  } catch (error) {
    throw new SignInError(`cannot reach ${what} at ${url} (${error.message})`);
  }
  const body = await response.json().catch(() => undefined);
  if (!response.ok || typeof body !== "object" || body === null)
    throw new SignInError(
      `${what} at ${url} answered ${response.status}${body?.error ? `: ${body.error}` : ""}`,
    );
  return body;
}

/** The issuer's metadata: RFC 8414 first, then OpenID discovery (appended, then inserted). */
async function discover(issuer) {
  const url = new URL(issuer);
  const path = url.pathname === "/" ? "" : url.pathname.replace(/\/+$/, "");
  const candidates = [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}${path}/.well-known/openid-configuration`,
  ];
  if (path !== "") candidates.push(`${url.origin}/.well-known/openid-configuration${path}`);
  const failures = [];
  for (const candidate of candidates) {
    try {
      const metadata = await getJson(candidate, "the identity provider's metadata");
      // RFC 8414 §3.3: a document naming another issuer is someone else's.
      if (metadata.issuer === issuer) return metadata;
      failures.push(`${candidate} names the issuer ${metadata.issuer}`);
    } catch (error) {
      failures.push(error.message);
    }
  }
  throw new SignInError(`no metadata for the identity provider ${issuer}: ${failures.join("; ")}`);
}

/** The client the page signs in with: the one the gateway names, else one it registered (or registers now). */
async function clientOf(settings, metadata) {
  if (settings.clientId !== undefined) return settings.clientId;
  const key = `${settings.issuer} ${redirectUri()}`;
  const clients = JSON.parse(localStorage.getItem(CLIENTS_KEY) ?? "{}");
  if (typeof clients[key] === "string") return clients[key];
  const fix = `register a public client there (no secret, redirect URI ${redirectUri()}) and set auth.dashboard.clientId in the gateway's config`;
  if (typeof metadata.registration_endpoint !== "string")
    throw new SignInError(`the identity provider ${settings.issuer} offers no client registration: ${fix}`);
  let response;
  try {
    response = await fetch(metadata.registration_endpoint, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({
        client_name: "mcplex dashboard",
        redirect_uris: [redirectUri()],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
        application_type: "web",
      }),
      cache: "no-store",
      credentials: "omit",
    });
  } catch {
    // A browser sees no more than this when the endpoint sends no CORS headers.
    throw new SignInError(
      `the identity provider ${settings.issuer} does not let a browser page register a client (its registration endpoint answers no cross-origin request): ${fix}`,
    );
  }
  const body = await response.json().catch(() => ({}));
  if (response.status !== 201 || typeof body.client_id !== "string")
    throw new SignInError(
      `the identity provider ${settings.issuer} refused to register this page (${response.status}${body.error ? `: ${body.error} ${body.error_description ?? ""}` : ""}): ${fix}`,
    );
  clients[key] = body.client_id;
  localStorage.setItem(CLIENTS_KEY, JSON.stringify(clients));
  return body.client_id;
}

function base64url(bytes) {
  let binary = "";
  for (const byte of new Uint8Array(bytes)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

const randomText = (size) => base64url(crypto.getRandomValues(new Uint8Array(size)));

/**
 * Sends the user to the identity provider (the page unloads). `challenge` is the gateway's
 * (see {@link signInChallenge}); `options.scope` asks for more (a step-up), `options.prompt`
 * (`login`) lets the user choose who signs in although the provider remembers someone.
 */
export async function beginSignIn(challenge, options = {}) {
  if (crypto.subtle === undefined)
    throw new SignInError(
      "signing in needs a secure page: open the dashboard over https (or on localhost), as the identity provider's PKCE check needs",
    );
  // The metadata's address is the gateway's, asked at this page's origin (it may be reached
  // under another name, as through ssh -L).
  const where = new URL(challenge.resourceMetadata ?? "/.well-known/oauth-protected-resource", location.href);
  const [resource, settings] = await Promise.all([
    getJson(`${where.pathname}${where.search}`, "the gateway's protected-resource metadata"),
    getJson("/dashboard/sign-in", "the gateway's sign-in settings"),
  ]);
  const servers = Array.isArray(resource.authorization_servers) ? resource.authorization_servers : [];
  if (!servers.includes(settings.issuer))
    throw new SignInError(
      `the gateway's metadata does not name the identity provider ${settings.issuer} (it names ${servers.join(", ") || "none"})`,
    );
  const metadata = await discover(settings.issuer);
  if (typeof metadata.authorization_endpoint !== "string" || typeof metadata.token_endpoint !== "string")
    throw new SignInError(
      `the identity provider ${settings.issuer} publishes no authorization or token endpoint`,
    );
  // OAuth 2.1 and MCP: without S256 PKCE announced, the page does not go on.
  if (!(metadata.code_challenge_methods_supported ?? []).includes("S256"))
    throw new SignInError(
      `the identity provider ${settings.issuer} does not announce PKCE with S256, which the page needs`,
    );
  const clientId = await clientOf(settings, metadata);
  const scopes = new Set(
    (settings.scopes ?? challenge.scope?.split(" ") ?? resource.scopes_supported ?? []).filter(Boolean),
  );
  for (const scope of options.scope?.split(" ") ?? []) if (scope !== "") scopes.add(scope);
  const verifier = randomText(32);
  const state = randomText(16);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  const url = new URL(metadata.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirectUri(),
    ...(scopes.size === 0 ? {} : { scope: [...scopes].join(" ") }),
    resource: resource.resource,
    code_challenge: base64url(digest),
    code_challenge_method: "S256",
    state,
    ...(options.prompt === undefined ? {} : { prompt: options.prompt }),
  }).toString();
  sessionStorage.setItem(
    PENDING_KEY,
    JSON.stringify({
      state,
      verifier,
      clientId,
      issuer: settings.issuer,
      issRequired: metadata.authorization_response_iss_parameter_supported === true,
      tokenEndpoint: metadata.token_endpoint,
      redirectUri: redirectUri(),
      resource: resource.resource,
    }),
  );
  sessionStorage.removeItem(SIGNED_OUT_KEY);
  location.assign(url.href);
}

/**
 * When the page is the provider's redirect back: checks it (state, and the issuer by RFC 9207),
 * exchanges the code for an access token, and resolves with `{ accessToken }`; resolves
 * undefined when the page was opened otherwise. Either way the code and the round trip's
 * secrets leave the address bar and sessionStorage first.
 */
export async function finishSignIn() {
  const query = new URLSearchParams(location.search);
  if (!query.has("state") && !query.has("code") && !query.has("error")) return undefined;
  const raw = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  history.replaceState(null, "", location.pathname);
  if (raw === null)
    throw new SignInError("this page did not start that sign-in (or it was already finished); sign in again");
  const pending = JSON.parse(raw);
  if (query.get("state") !== pending.state)
    throw new SignInError(
      "the identity provider's answer does not match the sign-in this page started; sign in again",
    );
  const iss = query.get("iss");
  if ((iss !== null || pending.issRequired) && iss !== pending.issuer)
    throw new SignInError(
      `the answer comes from ${iss ?? "an unnamed issuer"}, not ${pending.issuer}; sign in again`,
    );
  if (query.has("error"))
    throw new SignInError(
      `the identity provider did not sign you in: ${query.get("error")}${query.has("error_description") ? ` (${query.get("error_description")})` : ""}`,
    );
  let response;
  try {
    response = await fetch(pending.tokenEndpoint, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: query.get("code") ?? "",
        redirect_uri: pending.redirectUri,
        code_verifier: pending.verifier,
        client_id: pending.clientId,
        resource: pending.resource,
      }),
      cache: "no-store",
      credentials: "omit",
    });
  } catch (error) {
    throw new SignInError(`cannot reach the identity provider's token endpoint (${error.message})`);
  }
  const body = await response.json().catch(() => ({}));
  if (!response.ok || typeof body.access_token !== "string" || !/^bearer$/i.test(body.token_type ?? ""))
    throw new SignInError(
      `the identity provider's token endpoint answered ${response.status}${body.error ? `: ${body.error} ${body.error_description ?? ""}` : " without a bearer access token"}`,
    );
  return { accessToken: body.access_token };
}

/** What the access token says of its user, for showing who is signed in (the gateway checks it, not the page). */
export function claimsOf(accessToken) {
  const part = accessToken.split(".")[1];
  if (part === undefined) return {};
  try {
    const json = atob(part.replace(/-/g, "+").replace(/_/g, "/"));
    const claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0))));
    return typeof claims === "object" && claims !== null ? claims : {};
  } catch {
    return {};
  }
}
