import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RemoteServerConfig, ServerConfig } from "../config/types.js";
import type { ConnectFlow } from "../credentials/connect-flow.js";
import type { ConnectLinks } from "../credentials/connect-links.js";
import { type ConnectSignIn, SIGNED_IN_PATH } from "../credentials/connect-sign-in.js";
import { userValueNames } from "../credentials/user-value-names.js";
import { McplexError } from "../errors.js";
import { HttpError, readBody } from "./http-guard.js";

const PREFIX = "/connect/";
/** The cookie that binds a browser to the connects it began: random, HttpOnly, for the connect pages only. */
const COOKIE = "mcplex-connect";
const COOKIE_VALUE = /^[A-Za-z0-9_-]{32}$/;
/** How long the binding cookie lives: a little longer than a link. */
const COOKIE_SECONDS = 15 * 60;
/** Time the identity provider and the gateway have to answer one page's requests. */
const PAGE_DEADLINE_MS = 30_000;
/** Largest form accepted: a few values of a few KiB. */
const MAX_FORM_BYTES = 64 * 1024;
/** Time a form's body has to arrive in full. */
const FORM_DEADLINE_MS = 30_000;
/** No script, no style from anywhere, forms only to this gateway, never in a frame. */
const HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy":
    "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  // The link's ticket must not leave with a Referer (to the authorization server, say).
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

/** Options of {@link connectPages}. */
export interface ConnectPagesOptions {
  flow: ConnectFlow;
  links: ConnectLinks;
  /** Signs the browser in at the gateway's identity provider, to know it is the link's user. */
  signIn: ConnectSignIn;
  /** The configured server of a name (the config may be reloaded: asked on each request). */
  server: (name: string) => ServerConfig | undefined;
}

/** The `/connect/<server>` pages the HTTP front serves beside MCP. */
export interface ConnectPages {
  owns(path: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
}

/**
 * Where a user connects their own account of a per-user server, reached by the link a call
 * answered with (its ticket names the user it was made for):
 * - `GET /connect/<server>?ticket=` sets the browser's binding cookie and sends it to sign in
 *   at the gateway's identity provider; `GET /connect/-/signed-in` checks who signed in: another
 *   user than the ticket's is told the link is not theirs, and nothing is stored; a link its
 *   user already signed in through is refused as used;
 * - then, for a remote server, the browser goes to its authorization server, and
 *   `GET /connect/<server>/callback` (the same browser only) stores and says "Connected";
 * - for a server with `${user:NAME}` placeholders, a form, one password field per NAME, that
 *   `POST`s back (same origin, same browser only); values are never shown.
 * Every failure is a page saying what happened and what to do (a fresh link: call the tool again).
 */
export function connectPages(options: ConnectPagesOptions): ConnectPages {
  const { flow, links, signIn } = options;

  /** After the sign-in: refused when it is not the ticket's user or the link was used; else on to connect. */
  const signedIn = async (req: IncomingMessage, res: ServerResponse, signal: AbortSignal) => {
    if ((req.method ?? "GET") !== "GET") return notAllowed(res, "GET");
    const query = new URL(req.url ?? "/", "http://gateway").searchParams;
    const browser = browserOf(req);
    const { ticket, signedIn, isTicketUser } = await signIn.finish(query, browser, signal);
    if (!isTicketUser)
      return page(
        res,
        403,
        "Not your link",
        `This link was made for another user, not for you (${signedIn.subject}). Nothing was stored.`,
        {
          note: "Links to connect a server work only for the user whose call made them: call the tool yourself for a link of your own.",
        },
      );
    const server = options.server(ticket.server);
    const kind = server === undefined ? undefined : flow.kind(server);
    if (server === undefined || kind === undefined || browser === undefined)
      return page(res, 404, "Not found", `There is no server ${ticket.server} to connect here.`);
    if (!(await links.use(ticket, "signed-in")))
      return page(
        res,
        409,
        "Link already used",
        "This connect link has already been used. Nothing was changed.",
        {
          note: "Call the tool again for a fresh link.",
        },
      );
    if (kind === "values")
      return form(
        res,
        ticket.server,
        flow.valuesGrant(ticket, browser),
        ticket.subject,
        userValueNames(server),
      );
    const url = await flow.begin(ticket, server as RemoteServerConfig, browser);
    res.writeHead(302, { ...HEADERS, location: url.href }).end();
  };

  const serve = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    const signal = AbortSignal.timeout(PAGE_DEADLINE_MS);
    if (path === SIGNED_IN_PATH) return signedIn(req, res, signal);
    const rest = path.slice(PREFIX.length);
    const callback = rest.endsWith("/callback");
    let name: string;
    try {
      name = decodeURIComponent(callback ? rest.slice(0, -"/callback".length) : rest);
    } catch {
      return page(res, 404, "Not found", "There is no such server here.");
    }
    const server = options.server(name);
    const kind = server === undefined ? undefined : flow.kind(server);
    if (server === undefined || kind === undefined)
      return page(res, 404, "Not found", `There is no server ${name} to connect here.`);
    const query = new URL(req.url ?? "/", "http://gateway").searchParams;
    const method = req.method ?? "GET";

    if (callback) {
      if (method !== "GET" || kind !== "oauth") return notAllowed(res, "GET");
      const done = await flow.finish(server as RemoteServerConfig, query, browserOf(req));
      return page(
        res,
        200,
        `Connected to ${name}`,
        `Connected to ${name}. You can return to your conversation.`,
        {
          note: `Signed in as ${done.subject}.`,
        },
      );
    }
    if (method === "POST") {
      if (kind !== "values") return notAllowed(res, "GET");
      if (!sameOrigin(req, links.base))
        return page(res, 403, "Refused", "This form can only be sent from this gateway's own page.");
      const form = new URLSearchParams(await readForm(req));
      await flow.saveValues(form.get("grant"), browserOf(req), server, form);
      return page(
        res,
        200,
        `Connected to ${name}`,
        `Saved. ${name} now runs with your values; you can return to your conversation.`,
      );
    }
    if (method !== "GET" && method !== "HEAD")
      return notAllowed(res, kind === "values" ? "GET, POST" : "GET");
    const ticket = links.check(query.get("ticket"), name);
    // Nothing is shown nor stored before the browser signed in as the ticket's user.
    const browser = browserOf(req) ?? randomBytes(24).toString("base64url");
    const url = await signIn.begin(ticket, browser, signal);
    res
      .writeHead(302, {
        ...HEADERS,
        location: url.href,
        "set-cookie": bindingCookie(browser, links.base),
      })
      .end();
  };

  return {
    owns: (path) => path.startsWith(PREFIX) && path.length > PREFIX.length,
    async handle(req, res, path) {
      try {
        await serve(req, res, path);
      } catch (error) {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        // A McplexError's message names the server and the problem, never a token; anything
        // else (a bug, a network error) is not shown.
        const known = error instanceof McplexError;
        // A body left unread (too large, too slow) leaves the connection unusable.
        if (error instanceof HttpError) res.shouldKeepAlive = false;
        page(
          res,
          error instanceof HttpError ? error.status : known ? 400 : 502,
          "Not connected",
          known ? error.message : "The connection could not be made.",
          known && error.hint !== undefined
            ? { note: error.hint }
            : { note: "Call the tool again for a fresh link." },
        );
      }
    },
  };
}

function form(res: ServerResponse, server: string, grant: string, subject: string, names: string[]): void {
  const fields = names
    .map(
      (name) =>
        `<p><label>${escapeHtml(name)}<br><input type="password" name="${escapeHtml(name)}" required autocomplete="off"></label></p>`,
    )
    .join("\n");
  const body = `<p>${escapeHtml(server)} runs with values of your own, kept encrypted by this gateway for you (${escapeHtml(subject)}) only.</p>
<form method="post" action="${escapeHtml(`${PREFIX}${encodeURIComponent(server)}`)}">
<input type="hidden" name="grant" value="${escapeHtml(grant)}">
${fields}
<p><button type="submit">Save</button></p>
</form>`;
  res.writeHead(200, HEADERS).end(html(`Connect ${server}`, body));
}

function page(
  res: ServerResponse,
  status: number,
  title: string,
  text: string,
  extra: { note?: string } = {},
): void {
  const note = extra.note === undefined ? "" : `\n<p>${escapeHtml(extra.note)}</p>`;
  res.writeHead(status, HEADERS).end(html(title, `<p>${escapeHtml(text)}</p>${note}`));
}

function notAllowed(res: ServerResponse, allow: string): void {
  res.writeHead(405, { ...HEADERS, allow }).end(html("Not allowed", `<p>Use ${escapeHtml(allow)}.</p>`));
}

function html(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escapeHtml(title)} · mcplex</title></head>
<body><h1>${escapeHtml(title)}</h1>
${body}
</body></html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The browser's binding cookie, when it sent one of the right form. */
function browserOf(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === COOKIE) {
      const value = part.slice(eq + 1).trim();
      if (COOKIE_VALUE.test(value)) return value;
    }
  }
  return undefined;
}

/**
 * The binding cookie: HttpOnly, for the connect pages only, `SameSite=Lax` (sent on the
 * providers' redirects back, which are top-level navigations; not on a cross-site form post),
 * `Secure` when the gateway is reached over https.
 */
function bindingCookie(value: string, base: string): string {
  const secure = base.startsWith("https:") ? "; Secure" : "";
  return `${COOKIE}=${value}; Path=${PREFIX}; Max-Age=${COOKIE_SECONDS}; HttpOnly; SameSite=Lax${secure}`;
}

/** A form post must come from this gateway's own page: its Origin is the links' base or the Host it was sent to. */
function sameOrigin(req: IncomingMessage, base: string): boolean {
  const origin = req.headers.origin;
  if (origin === undefined || origin === "null") return false;
  if (origin === new URL(base).origin) return true;
  const host = req.headers.host;
  return host !== undefined && (origin === `http://${host}` || origin === `https://${host}`);
}

async function readForm(req: IncomingMessage): Promise<string> {
  const type = req.headers["content-type"] ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded"))
    throw new McplexError("INVALID_ARGUMENT", "the form must be sent as application/x-www-form-urlencoded");
  return (await readBody(req, MAX_FORM_BYTES, undefined, FORM_DEADLINE_MS)).toString("utf8");
}
