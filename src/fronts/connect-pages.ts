import type { IncomingMessage, ServerResponse } from "node:http";
import type { RemoteServerConfig, ServerConfig } from "../config/types.js";
import type { ConnectFlow } from "../credentials/connect-flow.js";
import type { ConnectLinks, ConnectTicket } from "../credentials/connect-links.js";
import { userValueNames } from "../credentials/user-value-names.js";
import { McplexError } from "../errors.js";
import { HttpError, readBody } from "./http-guard.js";

const PREFIX = "/connect/";
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
 * answered with (its ticket says who the user is; no sign-in cookie):
 * - `GET /connect/<server>?ticket=` of a remote server redirects to its authorization server,
 *   and `GET /connect/<server>/callback` finishes and says "Connected";
 * - `GET /connect/<server>?ticket=` of a server with `${user:NAME}` placeholders shows a form,
 *   one password field per NAME, that `POST`s back (same origin only); values are never shown.
 * Every failure is a page saying what happened and what to do (a fresh link: call the tool again).
 */
export function connectPages(options: ConnectPagesOptions): ConnectPages {
  const { flow, links } = options;

  const serve = async (req: IncomingMessage, res: ServerResponse, path: string) => {
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
      const done = await flow.finish(server as RemoteServerConfig, query);
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
      const ticket = links.check(form.get("ticket"), name);
      await flow.saveValues(ticket, server, form);
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
    if (kind === "values") return form(res, name, query.get("ticket") ?? "", ticket, userValueNames(server));
    const url = await flow.begin(ticket, server as RemoteServerConfig);
    res.writeHead(302, { ...HEADERS, location: url.href }).end();
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

function form(
  res: ServerResponse,
  server: string,
  signed: string,
  ticket: ConnectTicket,
  names: string[],
): void {
  const fields = names
    .map(
      (name) =>
        `<p><label>${escapeHtml(name)}<br><input type="password" name="${escapeHtml(name)}" required autocomplete="off"></label></p>`,
    )
    .join("\n");
  const body = `<p>${escapeHtml(server)} runs with values of your own, kept encrypted by this gateway for you (${escapeHtml(ticket.subject)}) only.</p>
<form method="post" action="${escapeHtml(`${PREFIX}${encodeURIComponent(server)}`)}">
<input type="hidden" name="ticket" value="${escapeHtml(signed)}">
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
