import { spawn } from "node:child_process";
import { SecretStore } from "../config/secret-store.js";
import { McplexError } from "../errors.js";
import type { Authorize, OAuthRecord, OAuthStore } from "../upstream/oauth.js";

/** The secret-store entry of a server's OAuth record. */
export function oauthSecretName(server: string): string {
  return `oauth.${server}`;
}

/** Keeps OAuth records encrypted in the secret store, one entry per server (`oauth.<server>`). */
export function secretOAuthStore(store: SecretStore = new SecretStore()): OAuthStore {
  return {
    async load(server) {
      const text = await store.get(oauthSecretName(server));
      return text === undefined ? undefined : (JSON.parse(text) as OAuthRecord);
    },
    save: (server, record) => store.set(oauthSecretName(server), JSON.stringify(record)),
  };
}

/** How long `mcplex auth login` waits for the browser to come back. */
const LOGIN_WAIT_MS = 5 * 60_000;

/**
 * An {@link Authorize} for a person at a terminal: listens on the loopback redirect URL,
 * prints the authorization URL to open, and resolves with the code the browser brings
 * back (checking `state`), or fails on an error redirect or after five minutes.
 */
export function loopbackAuthorize(
  redirectUrl: string,
  print: (line: string) => void,
  options: { openBrowser?: boolean } = {},
): Authorize {
  return async (url, server) => {
    // node:http only when a person authorizes: `serve` builds this for every start.
    const { createServer } = await import("node:http");
    const redirect = new URL(redirectUrl);
    const expectedState = url.searchParams.get("state");
    return new Promise((resolve, reject) => {
      const fail = (message: string, hint?: string) => {
        close();
        reject(
          new McplexError("UPSTREAM_UNAUTHORIZED", `${server}: ${message}`, {
            server,
            ...(hint ? { hint } : {}),
          }),
        );
      };
      const http = createServer((req, res) => {
        const back = new URL(req.url ?? "/", redirect);
        if (back.pathname !== redirect.pathname) {
          res.writeHead(404).end();
          return;
        }
        const code = back.searchParams.get("code");
        const error = back.searchParams.get("error");
        const page = (text: string) =>
          res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end(`${text}\n`);
        if (expectedState !== null && back.searchParams.get("state") !== expectedState) {
          page("mcplex: this answer does not belong to the authorization in progress; ignored.");
          return;
        }
        if (error !== null || code === null) {
          page(
            `mcplex: the authorization of ${server} failed: ${error ?? "no code"}. You can close this tab.`,
          );
          fail(
            `the authorization server answered ${error ?? "without a code"}`,
            back.searchParams.get("error_description") ?? undefined,
          );
          return;
        }
        page(`mcplex: ${server} is authorized. You can close this tab.`);
        close();
        const iss = back.searchParams.get("iss");
        resolve(iss === null ? { code } : { code, iss });
      });
      const timer = setTimeout(() => fail("no answer from the browser within 5 minutes"), LOGIN_WAIT_MS);
      const close = () => {
        clearTimeout(timer);
        http.close();
        http.closeAllConnections();
      };
      http.once("error", (error: NodeJS.ErrnoException) =>
        fail(
          `cannot listen on ${redirect.host} for the redirect: ${error.code ?? error.message}`,
          "Free that port, or set oauth.redirectUrl to another loopback port (and register it, for a pre-registered client).",
        ),
      );
      http.listen(Number(redirect.port || 80), redirect.hostname.replace(/^\[|\]$/g, ""), () => {
        print(`Open this URL in a browser to authorize ${server}:\n\n  ${url.href}\n`);
        if (options.openBrowser === true) openInBrowser(url.href);
        print(
          `Waiting for the authorization server to redirect to ${redirect.origin}${redirect.pathname} ...`,
        );
      });
    });
  };
}

/**
 * Asks the desktop to open `url` (xdg-open, open, or start), without waiting and without
 * failing: the URL is printed anyway, for machines with no browser.
 */
function openInBrowser(url: string): void {
  const [command, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url]]
        : ["xdg-open", [url]];
  try {
    const child = spawn(command, args, { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    // No opener on this machine: the printed URL is the way.
  }
}
