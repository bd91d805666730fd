// A gateway with sign-in and a per-user stdio server (test/fixtures/servers/whoami-server.mjs),
// its users signed in at a real authorization server and their values put in the vault, for
// the per-user tests.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { expect } from "vitest";
import { type RunningGateway, serve } from "../../src/assembly/serve.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { FileCredentialVault } from "../../src/credentials/file-credential-vault.js";
import { userKey } from "../../src/credentials/user-ref.js";
import { postRev2026, type RawResponse, resultText, rev2026Request } from "../support/gateway.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";

const WHOAMI = resolve("test/fixtures/servers/whoami-server.mjs");
/** The vault's key (MCPLEX_SECRET_KEY's form: 32 bytes, base64). */
const VAULT_KEY = Buffer.alloc(32, 7).toString("base64");
/** The static token of the config: a caller with no identity. */
export const STATIC_TOKEN = "static-token-of-the-per-user-test";

/** What the whoami fixture answers. */
export interface Whoami {
  pid: number;
  user: string;
  key: string;
  tag: string;
  served: number;
  echo: string | null;
  word?: string;
}

/** A running gateway, its authorization server, and the users' access tokens. */
export interface PerUserGateway {
  as: AuthServer;
  running: RunningGateway;
  mcp: string;
  tokens: Record<string, string>;
  /** A 2026 `tools/call` with `bearer`; the JSON-RPC answer. */
  call(
    bearer: string,
    name: string,
    args?: Record<string, unknown>,
    capabilities?: Record<string, unknown>,
    extra?: Record<string, unknown>,
  ): Promise<RawResponse & { json: unknown }>;
  /** `user`'s call of a whoami tool, its answer parsed. */
  whoami(user: string, name?: string, args?: Record<string, unknown>): Promise<Whoami>;
  close(): Promise<void>;
}

/** The values each user set for the `who` server. */
export function valuesOf(user: string): Record<string, string> {
  return { NAME: user, API_KEY: `api-key-of-${user}-0123456789`, TAG: `tag-of-${user}` };
}

/**
 * Starts the authorization server and the gateway; signs `users` in and puts their values in the
 * vault. `extraConfig` goes at the end of the `auth:` block (or, unindented, at the top level);
 * `serverExtra` (indented by four) into the `who` server, or (indented by two) servers of its
 * own; given as a function, it is made once the authorization server runs.
 */
export async function startPerUserGateway(
  users: string[],
  extraConfig = "",
  extra: string | ((as: AuthServer) => Promise<string>) = "",
): Promise<PerUserGateway> {
  // The file vault serve() keeps users' values in, in a directory of the test's own.
  const vaultHome = mkdtempSync(join(tmpdir(), "mcplex-per-user-vault-"));
  const as = await startAuthServer({
    users: users.map((sub) => ({ sub, email: `${sub}@example.com`, groups: ["eng"] })),
  });
  const serverExtra = typeof extra === "string" ? extra : await extra(as);
  const text = `serve:
  readyWait: 1m
tokens:
  - token: ${STATIC_TOKEN}
servers:
  who:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(WHOAMI)}, "--tag=\${user:TAG}"]
    env: { WHOAMI_USER: "\${user:NAME}", WHOAMI_KEY: "\${user:API_KEY}" }
    credentials: per-user
    cache: { ttl: 10m }
${serverExtra}auth:
  issuers:
    - issuer: ${as.issuer}
  scopes: ["mcp:tools"]
${extraConfig}`;
  const running = await serve({
    config: parseConfig(text, { source: "mcplex.yaml", env: {} }),
    transport: "http",
    http: { host: "127.0.0.1", port: 0 },
    watch: false,
    credentialVault: new FileCredentialVault({
      env: { MCPLEX_HOME: vaultHome, MCPLEX_SECRET_KEY: VAULT_KEY },
    }),
  });
  await running.started;
  const mcp = running.http!.url;
  const tokens: Record<string, string> = {};
  for (const user of users) {
    tokens[user] = (await as.signIn({ user, resource: mcp })).accessToken;
    await running.hub.credentialVault.put(userKey(as.issuer, user), "who", {
      values: valuesOf(user),
      connectedAt: Date.now(),
    });
  }
  let ids = 0;
  const call: PerUserGateway["call"] = async (bearer, name, args = {}, capabilities = {}, extra = {}) => {
    const answer = await postRev2026(
      mcp,
      rev2026Request(++ids, "tools/call", { name, arguments: args, ...extra }, capabilities),
      { authorization: `Bearer ${bearer}` },
    );
    expect(answer.status).toBe(200);
    return answer;
  };
  return {
    as,
    running,
    mcp,
    tokens,
    call,
    async whoami(user, name = "who__whoami", args = {}) {
      const answer = await call(tokens[user]!, name, args);
      return JSON.parse(resultText((answer.json as { result: unknown }).result)) as Whoami;
    },
    async close() {
      await running.close();
      await as.close();
      rmSync(vaultHome, { recursive: true, force: true });
    },
  };
}
