/**
 * A person's browser opening a connect link, without Chromium: `fetch` with manual redirects, a
 * cookie jar for the gateway, and one sign-in session per authorization server. Each redirect
 * to an authorization server it knows is walked through its sign-in and consent pages as the
 * person's account there (see approveAuthorization), and back to the gateway; it stops at the
 * first page that is not a redirect. It follows whatever the gateway does, so the same walk
 * shows the old flow (straight to the server's provider) and the new one (the gateway's first).
 */
import { type AuthServer, CookieJar } from "../../support/oidc-provider.js";

/** Who the browser signs in as at each authorization server, by issuer. */
export type Accounts = Map<AuthServer, string>;

/** The page the walk stopped at. */
export interface Landed {
  status: number;
  text: string;
  url: URL;
  /** The authorization servers the browser signed in at, in order (issuers). */
  signedInAt: string[];
}

/** One person's browser. */
export class LinkBrowser {
  readonly jar = new CookieJar();
  readonly #sessions = new Map<AuthServer, CookieJar>();

  constructor(readonly accounts: Accounts) {}

  /** Opens `url` and follows the redirects, signing in where asked; the page it lands on. */
  async open(url: string | URL, options: { stopAt?: (location: URL) => boolean } = {}): Promise<Landed> {
    let next = new URL(url);
    const signedInAt: string[] = [];
    for (let hop = 0; hop < 8; hop++) {
      const at = this.#serverOf(next);
      if (at !== undefined) {
        // An authorization URL handed over (as a person passes a link on): signed in there first.
        next = await this.signIn(at, next);
        signedInAt.push(at.issuer);
        continue;
      }
      const response = await this.get(next);
      const location = response.headers.get("location");
      if (response.status < 300 || response.status >= 400 || location === null)
        return { status: response.status, text: await response.text(), url: next, signedInAt };
      await response.body?.cancel();
      const target = new URL(location, next);
      if (options.stopAt?.(target) === true)
        return { status: response.status, text: "", url: target, signedInAt };
      next = target;
    }
    throw new Error(`LinkBrowser: too many redirects from ${url}`);
  }

  #serverOf(url: URL): AuthServer | undefined {
    return [...this.accounts.keys()].find((as) => url.origin === new URL(as.issuer).origin);
  }

  /** Signs in at `server` for `authorization` and says where the provider sends the browser back. */
  async signIn(server: AuthServer, authorization: URL): Promise<URL> {
    const user = this.accounts.get(server);
    if (user === undefined) throw new Error(`LinkBrowser: no account at ${server.issuer}`);
    const jar = this.#sessions.get(server) ?? new CookieJar();
    this.#sessions.set(server, jar);
    const query = await server.approve(authorization, { user, jar });
    const back = new URL(authorization.searchParams.get("redirect_uri")!);
    back.search = query.toString();
    return back;
  }

  /** A GET of the gateway with this browser's cookies. */
  async get(url: URL): Promise<Response> {
    const response = await fetch(url, { redirect: "manual", headers: { cookie: this.jar.header(url) } });
    this.jar.store(url, response.headers);
    return response;
  }

  /** Posts a form to the gateway as the page would (its origin, this browser's cookies). */
  async post(url: URL, form: URLSearchParams): Promise<{ status: number; text: string }> {
    const response = await fetch(url, {
      method: "POST",
      redirect: "manual",
      headers: {
        cookie: this.jar.header(url),
        origin: url.origin,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: form.toString(),
    });
    this.jar.store(url, response.headers);
    return { status: response.status, text: await response.text() };
  }

  /** Fills the form of values `page` shows (its hidden fields kept) and sends it. */
  async submit(page: Landed, values: Record<string, string>): Promise<{ status: number; text: string }> {
    const action = /<form method="post" action="([^"]+)"/.exec(page.text)?.[1];
    if (action === undefined) throw new Error(`LinkBrowser: no form on the page: ${page.text}`);
    const form = new URLSearchParams(values);
    for (const [, name, value] of page.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
      form.set(name!, decodeEntities(value!));
    return this.post(new URL(decodeEntities(action), page.url), form);
  }
}

function decodeEntities(text: string): string {
  return text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
}
