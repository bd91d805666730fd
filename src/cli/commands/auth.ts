import { loadConfig } from "../../config/load-config.js";
import { SecretStore } from "../../config/secret-store.js";
import type { RemoteServerConfig } from "../../config/types.js";
import { McplexError, UpstreamUnavailableError } from "../../errors.js";
import { authorizeServer, rotateDpopKey, ServerOAuthProvider } from "../../upstream/oauth.js";
import { authDefinition, authLoginDefinition, authLogoutDefinition } from "../definitions/auth.js";
import { loopbackAuthorize, oauthSecretName, secretOAuthStore } from "../oauth-login.js";
import { EXIT, UsageError } from "../output.js";
import { parseCommandArgs } from "../parse-command-args.js";

const USAGE = `usage: ${authDefinition.usage}`;

/**
 * `mcplex auth login NAME`: authorizes mcplex with a server configured with `oauth`, in a
 * browser, and keeps the tokens in the secret store (refreshed from then on by every
 * command). `mcplex auth logout NAME` forgets them. `mcplex auth rotate-dpop NAME` replaces the
 * server's DPoP key pair and drops the tokens bound to the old one.
 */
export async function authCommand(args: string[]): Promise<number> {
  const { values, positionals } = await parseCommandArgs(
    { name: "auth", flags: { ...authLoginDefinition.flags, ...authLogoutDefinition.flags } },
    args,
    { allowPositionals: true },
  );
  const [sub, name, ...extra] = positionals;
  if (
    (sub !== "login" && sub !== "logout" && sub !== "rotate-dpop") ||
    name === undefined ||
    extra.length > 0
  ) {
    throw new UsageError(USAGE);
  }
  const store = new SecretStore();
  if (sub === "logout") {
    const removed = await store.remove(oauthSecretName(name));
    console.error(removed ? `forgot the OAuth tokens of ${name}` : `no OAuth tokens were kept for ${name}`);
    return EXIT.ok;
  }
  const config = await loadConfig(values.config === undefined ? {} : { config: values.config });
  const server = config.servers.find((s) => s.name === name);
  if (server === undefined) {
    const names = config.servers.map((s) => s.name).join(", ");
    throw new UsageError(`no server named "${name}" in ${config.source}; servers: ${names || "none"}`);
  }
  // The config admits `oauth` on http(s) servers only.
  const oauth = (server as Partial<RemoteServerConfig>).oauth;
  if (oauth === undefined) {
    throw new UsageError(`${name} is not configured for OAuth: add "oauth: true" to it in ${config.source}`);
  }
  const print = (line: string) => console.error(line);
  if (sub === "rotate-dpop") {
    if (oauth.dpop !== true) {
      throw new UsageError(`${name} does not use DPoP: add "dpop: true" to its oauth in ${config.source}`);
    }
    const { previous, thumbprint } = await rotateDpopKey(secretOAuthStore(store), name);
    print(`${name}: new DPoP key ${thumbprint}${previous === undefined ? "" : ` (was ${previous})`}`);
    print(
      oauth.grant === "authorization_code"
        ? `its tokens were bound to the old key and are dropped: run "mcplex auth login ${name}"`
        : "its tokens were bound to the old key and are dropped; the next connection gets new ones",
    );
    return EXIT.ok;
  }
  const provider = new ServerOAuthProvider(name, oauth, {
    store: secretOAuthStore(store),
    authorize: loopbackAuthorize(oauth.redirectUrl, print, { openBrowser: values["no-browser"] !== true }),
  });
  const url = (server as RemoteServerConfig).url;
  try {
    await authorizeServer(provider, new URL(url), { force: true });
  } catch (error) {
    if (error instanceof McplexError) throw error;
    // The SDK's discovery throws a bare `TypeError: fetch failed`; its cause says why.
    const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
    const why =
      typeof cause?.code === "string" ? cause.code : String(cause?.message ?? (error as Error).message);
    throw new UpstreamUnavailableError(
      `could not authorize with ${url}: ${(error as Error).message} (${why})`,
      { server: name, hint: `check that ${url} is up and is the server's URL in ${config.source}` },
      { cause: error },
    );
  }
  print(`${name} is authorized; its tokens are kept in ${store.file} and refreshed when they expire.`);
  return EXIT.ok;
}
