/**
 * A user at the authorization server without a browser: `fetch` with manual redirects and a
 * small cookie jar walks an authorization URL through the sign-in and consent pages (see
 * interaction-pages.ts) to the client's redirect URI, and hands back what it carried.
 */

/** The redirect URI the test clients register and send; nothing listens there, nothing requests it. */
export const TEST_REDIRECT_URI = "http://127.0.0.1/oauth/callback";

/** The cookies of one user agent (one host: the test server's), by name and path. */
export class CookieJar {
  readonly #cookies = new Map<string, { name: string; value: string; path: string }>();

  /** Takes the `Set-Cookie` headers of an answer to a request for `url`. */
  store(url: URL, headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";");
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      let path = url.pathname.slice(0, url.pathname.lastIndexOf("/")) || "/";
      let gone = false;
      for (const attribute of attributes) {
        const [key = "", val = ""] = attribute.split("=").map((part) => part.trim());
        const lower = key.toLowerCase();
        if (lower === "path" && val.startsWith("/")) path = val;
        if (lower === "max-age" && Number(val) <= 0) gone = true;
        if (lower === "expires" && Date.parse(val) <= Date.now()) gone = true;
      }
      const id = `${name};${path}`;
      if (gone) this.#cookies.delete(id);
      else this.#cookies.set(id, { name, value, path });
    }
  }

  /** The `Cookie` header for a request to `url` (RFC 6265 path match, longest path first). */
  header(url: URL): string {
    return [...this.#cookies.values()]
      .filter(({ path }) => {
        const p = url.pathname;
        return p === path || (p.startsWith(path) && (path.endsWith("/") || p[path.length] === "/"));
      })
      .sort((a, b) => b.path.length - a.path.length)
      .map(({ name, value }) => `${name}=${value}`)
      .join("; ");
  }
}

/** How the user answers the pages. */
export interface ApproveOptions {
  /** Who signs in (a `sub` of the server's users). */
  user: string;
  /** `deny` refuses at the consent page (the client gets `error=access_denied`); default `allow`. */
  decision?: "allow" | "deny";
  /** The user agent's cookies; pass the same jar to keep the sign-in session between flows. */
  jar?: CookieJar;
  signal?: AbortSignal;
}

/**
 * Follows `authorizationUrl` as a user would: signs in as `user`, answers the consent page,
 * and resolves with the query the authorization server sent to the client's redirect URI
 * (`code`, `state`, `iss`, or `error`). The redirect URI itself is never requested.
 */
export async function approveAuthorization(
  authorizationUrl: URL | string,
  options: ApproveOptions,
): Promise<URLSearchParams> {
  const start = new URL(authorizationUrl);
  const redirectUri = start.searchParams.get("redirect_uri");
  if (redirectUri === null) throw new Error(`approveAuthorization: ${start.href} has no redirect_uri`);
  const jar = options.jar ?? new CookieJar();
  const signal = options.signal ?? AbortSignal.timeout(15_000);
  let next: { url: URL; form?: URLSearchParams } = { url: start };

  for (let hop = 0; hop < 20; hop++) {
    const { url, form } = next;
    const headers = new Headers({ cookie: jar.header(url) });
    if (form !== undefined) headers.set("content-type", "application/x-www-form-urlencoded");
    const response = await fetch(url, {
      method: form === undefined ? "GET" : "POST",
      headers,
      body: form?.toString(),
      redirect: "manual",
      signal,
    });
    jar.store(url, response.headers);
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location !== null) {
      await response.body?.cancel();
      const target = new URL(location, url);
      if (isRedirectTo(target, redirectUri)) return target.searchParams;
      next = { url: target };
      continue;
    }
    const html = await response.text();
    if (response.status !== 200) {
      throw new Error(`approveAuthorization: ${url.pathname} answered ${response.status}: ${textOf(html)}`);
    }
    const prompt = /<form[^>]*\bdata-prompt="(login|consent)"/.exec(html)?.[1];
    const action = /<form[^>]*\baction="([^"]+)"/.exec(html)?.[1];
    if (prompt === undefined || action === undefined) {
      throw new Error(
        `approveAuthorization: ${url.pathname} is not a sign-in or consent page: ${textOf(html)}`,
      );
    }
    if (prompt === "login") {
      next = {
        url: new URL(action, url),
        form: new URLSearchParams({ login: options.user, password: "test" }),
      };
    } else if (options.decision === "deny") {
      const abort = /<a href="([^"]+\/abort)"/.exec(html)?.[1];
      if (abort === undefined) throw new Error("approveAuthorization: the consent page has no way to deny");
      next = { url: new URL(abort, url) };
    } else {
      next = { url: new URL(action, url), form: new URLSearchParams() };
    }
  }
  throw new Error(`approveAuthorization: no redirect to ${redirectUri} within 20 steps`);
}

function isRedirectTo(target: URL, redirectUri: string): boolean {
  const expected = new URL(redirectUri);
  return target.origin === expected.origin && target.pathname === expected.pathname;
}

function textOf(html: string): string {
  return html
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 300);
}
