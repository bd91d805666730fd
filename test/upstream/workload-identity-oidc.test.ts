/**
 * Workload identity federation (`oauth: { grant: jwt-bearer, assertion: { file } }`) end to end
 * against the test oidc-provider as the server's authorization server: it trusts a workload
 * issuer (a cluster's service-account issuer, here a key of the test's own) and takes the
 * workload's JWT, read from its file as Kubernetes projects it, in the JWT-bearer grant for a
 * token of the server; the server checks each request's token against the provider's keys.
 */
import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import { Hub } from "../../src/hub/hub.js";
import { memoryOAuthStore } from "../../src/upstream/oauth.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";
import { startTokenCheckingServer, type TokenCheckingServer } from "../support/token-checking-server.js";

const WORKLOAD_ISSUER = "https://oidc.cluster.example.com";
let as: AuthServer;
let api: TokenCheckingServer;
let dir: string;
let key: CryptoKey;
let publicJwk: JWK;
let clientId: string;

/** A service-account token of the cluster for `sub`, with the authorization server as audience. */
function workloadJwt(sub: string, audience = as.issuer): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: "ES256", kid: "cluster" })
    .setIssuer(WORKLOAD_ISSUER)
    .setSubject(sub)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime("10m")
    .sign(key);
}

/** Writes the token where the config reads it, replacing the file at once (as the kubelet does). */
async function project(file: string, token: string): Promise<void> {
  await writeFile(`${file}.new`, `${token}\n`);
  await rename(`${file}.new`, file);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-wif-"));
  const pair = await generateKeyPair("ES256", { extractable: true });
  key = pair.privateKey as CryptoKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: "cluster", alg: "ES256", use: "sig" };
  as = await startAuthServer({ jwtBearer: true, tokenExchange: false });
  api = await startTokenCheckingServer({ issuer: as.issuer, jwksUri: as.endpoints.jwks });
  as.trustWorkloads(WORKLOAD_ISSUER, () => ({ keys: [publicJwk] }));
  ({ clientId } = await as.allowWorkload({ resources: { [api.audience]: {} }, ttlSeconds: 60 }));
});

afterAll(async () => {
  await api?.close();
  expect(as?.serverErrors).toEqual([]);
  await as?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("workload identity federation against the test oidc-provider", () => {
  it("calls the server as the workload, with the JWT read from its file at each token request", async () => {
    const file = join(dir, "token");
    await project(file, await workloadJwt("system:serviceaccount:apps:reporter"));
    const config = parseConfig(
      `servers:\n  api:\n    url: ${api.url}\n    oauth:\n      grant: jwt-bearer\n      clientId: ${clientId}\n      assertion:\n        file: ${file}\n`,
      { source: join(dir, "mcplex.yaml"), env: {} },
    );
    const hub = new Hub({ config, oauth: { store: memoryOAuthStore() } });
    try {
      await hub.start();
      expect(hub.servers()[0]?.state, hub.servers()[0]?.error).toBe("ready");
      const whoami = hub.tools().find((t) => t.originalName === "whoami")!;
      await hub.callTool(whoami.name, { tag: "first" });
      expect(api.served.at(-1)).toMatchObject({ sub: "system:serviceaccount:apps:reporter", tag: "first" });
      // The kubelet rotates the token; the server revokes the token it had: the next token
      // request reads the new file.
      await project(file, await workloadJwt("system:serviceaccount:apps:rotated"));
      api.revoke(api.served.at(-1)!.jti!);
      await hub.callTool(whoami.name, { tag: "second" });
      expect(api.served.at(-1)).toMatchObject({ sub: "system:serviceaccount:apps:rotated", tag: "second" });
      expect(as.jwtBearerGrants.map((g) => [g.sub, g.outcome])).toEqual([
        ["system:serviceaccount:apps:reporter", "issued"],
        ["system:serviceaccount:apps:rotated", "issued"],
      ]);
    } finally {
      await hub.close();
    }
  });

  it("is refused with the provider's answer when the workload's JWT names another audience", async () => {
    const file = join(dir, "wrong-audience");
    await project(
      file,
      await workloadJwt("system:serviceaccount:apps:reporter", "https://elsewhere.example.com"),
    );
    const config = parseConfig(
      `servers:\n  api:\n    url: ${api.url}\n    oauth:\n      grant: jwt-bearer\n      clientId: ${clientId}\n      assertion:\n        file: ${file}\n`,
      { source: join(dir, "mcplex.yaml"), env: {} },
    );
    const hub = new Hub({ config, oauth: { store: memoryOAuthStore() } });
    try {
      await hub.start();
      const status = hub.servers()[0];
      expect(status?.state).not.toBe("ready");
      expect(status?.error).toContain("invalid_grant");
      expect(status?.error).not.toContain("eyJ");
    } finally {
      await hub.close();
    }
  });
});
