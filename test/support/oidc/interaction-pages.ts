/**
 * The sign-in and consent pages of the test authorization server, in place of
 * `oidc-provider`'s `devInteractions` (which warn on every start and accept any login): real
 * HTML forms, so a browser (Chromium in an end-to-end test) or {@link approveAuthorization}
 * over plain HTTP can fill them in. Only the server's own users may sign in; the password
 * field is there for a browser to fill and is not checked.
 *
 *   GET  /interaction/:uid          the page for the prompt at hand (login or consent)
 *   POST /interaction/:uid/login    login=<sub>
 *   POST /interaction/:uid/consent  grants what the request asked for
 *   GET  /interaction/:uid/abort    refuses (access_denied back to the client)
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Provider } from "oidc-provider";

const ROUTE = /^\/interaction\/([A-Za-z0-9_-]+)(?:\/(login|consent|abort))?$/;

/** Whether `pathname` is one of the interaction routes (the server sends those here). */
export function isInteractionPath(pathname: string): boolean {
  return ROUTE.test(pathname);
}

/** Serves one interaction request; `users` are the subjects allowed to sign in. */
export async function serveInteraction(
  provider: Provider,
  users: ReadonlySet<string>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? "/", provider.issuer);
  const [, uid = "", action] = ROUTE.exec(url.pathname) ?? [];
  let details: Awaited<ReturnType<Provider["interactionDetails"]>>;
  try {
    details = await provider.interactionDetails(req, res);
  } catch {
    page(res, 400, "Sign-in expired", "<p>This sign-in has expired or was already finished.</p>");
    return;
  }
  if (details.uid !== uid) {
    page(res, 400, "Sign-in mismatch", "<p>This page belongs to another sign-in.</p>");
    return;
  }
  const prompt = details.prompt.name;

  if (req.method === "GET" && action === undefined) {
    if (prompt === "login") loginPage(res, uid);
    else if (prompt === "consent") consentPage(res, uid, details.prompt.details);
    else page(res, 501, "Not implemented", `<p>No page for the prompt ${escapeHtml(prompt)}.</p>`);
    return;
  }
  if (req.method === "GET" && action === "abort") {
    await provider.interactionFinished(
      req,
      res,
      { error: "access_denied", error_description: "the user refused" },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  if (req.method !== "POST" || action === undefined) {
    page(res, 405, "Method not allowed", "<p>Use the form.</p>");
    return;
  }

  const form = await readForm(req);
  if (action === "login" && prompt === "login") {
    const login = form.get("login") ?? "";
    if (!users.has(login)) {
      loginPage(res, uid, `No user named ${login}.`, 403);
      return;
    }
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: login } },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  if (action === "consent" && prompt === "consent") {
    const accountId = details.session?.accountId;
    if (accountId === undefined) {
      page(res, 400, "Not signed in", "<p>Consent needs a signed-in user.</p>");
      return;
    }
    const grant =
      (details.grantId === undefined ? undefined : await provider.Grant.find(details.grantId)) ??
      new provider.Grant({ accountId, clientId: details.params.client_id });
    const asked = details.prompt.details as ConsentDetails;
    if (asked.missingOIDCScope !== undefined) grant.addOIDCScope(asked.missingOIDCScope.join(" "));
    if (asked.missingOIDCClaims !== undefined) grant.addOIDCClaims(asked.missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(asked.missingResourceScopes ?? {})) {
      grant.addResourceScope(resource, scopes.join(" "));
    }
    await provider.interactionFinished(
      req,
      res,
      { consent: { grantId: await grant.save() } },
      { mergeWithLastSubmission: true },
    );
    return;
  }
  page(
    res,
    409,
    "Wrong step",
    `<p>This sign-in is at the ${escapeHtml(prompt)} step, not ${escapeHtml(action)}.</p>`,
  );
}

/** What the consent prompt asks for (`oidc-provider`'s prompt details). */
interface ConsentDetails {
  missingOIDCScope?: string[];
  missingOIDCClaims?: string[];
  missingResourceScopes?: Record<string, string[]>;
}

function loginPage(res: ServerResponse, uid: string, error?: string, status = 200): void {
  const note = error === undefined ? "" : `<p role="alert">${escapeHtml(error)}</p>`;
  page(
    res,
    status,
    "Sign in",
    `${note}<form method="post" action="/interaction/${uid}/login" data-prompt="login">
<label>User <input type="text" name="login" required autofocus></label>
<label>Password <input type="password" name="password"></label>
<button type="submit">Sign in</button>
</form>`,
  );
}

function consentPage(res: ServerResponse, uid: string, details: Record<string, unknown>): void {
  const asked = details as ConsentDetails;
  const items = [
    ...(asked.missingOIDCScope ?? []).map((scope) => `<li>${escapeHtml(scope)}</li>`),
    ...Object.entries(asked.missingResourceScopes ?? {}).flatMap(([resource, scopes]) =>
      scopes.map((scope) => `<li>${escapeHtml(scope)} on ${escapeHtml(resource)}</li>`),
    ),
  ];
  page(
    res,
    200,
    "Allow access",
    `<ul>${items.join("")}</ul>
<form method="post" action="/interaction/${uid}/consent" data-prompt="consent">
<button type="submit">Allow</button>
</form>
<a href="/interaction/${uid}/abort">Deny</a>`,
  );
}

function page(res: ServerResponse, status: number, title: string, body: string): void {
  const document = `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
  res
    .writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" })
    .end(document);
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  let text = "";
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 64 * 1024) break;
  }
  return new URLSearchParams(text);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
