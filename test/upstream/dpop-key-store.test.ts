import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { secretOAuthStore } from "../../src/cli/oauth-login.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { SecretStore } from "../../src/config/secret-store.js";
import { Hub } from "../../src/hub/hub.js";
import { openDpopKey } from "../../src/upstream/dpop-key.js";
import { type OAuthStore, rotateDpopKey } from "../../src/upstream/oauth.js";
import {
  type AssertionGrantServer,
  CLIENTS,
  startAssertionGrantServer,
} from "../support/assertion-grant-server.js";

/**
 * DPoP-bound tokens (RFC 9449) with the key pair kept in the CLI's store, the encrypted secret
 * store: the server binds each token to the key whose proof came with its token request and
 * takes it only as `DPoP <token>` with a proof of that key, so a hub that presented another key
 * would be refused.
 */

let auth: AssertionGrantServer;
let dir: string;
let secrets: SecretStore;
let store: OAuthStore;
const hubs: Hub[] = [];

beforeAll(async () => {
  auth = await startAssertionGrantServer();
  dir = await mkdtemp(join(tmpdir(), "mcplex-dpop-"));
  secrets = new SecretStore({ file: join(dir, "secrets.enc"), env: {} });
  store = secretOAuthStore(secrets);
});

afterEach(async () => {
  for (const hub of hubs.splice(0)) await hub.close();
});

afterAll(async () => {
  await auth?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A hub run: `billing` (client credentials, DPoP) from YAML, its tokens and key in `store`. */
async function run(): Promise<void> {
  const yaml = [
    "servers:",
    "  billing:",
    `    url: ${auth.mcpUrl}`,
    "    oauth:",
    "      grant: client_credentials",
    `      clientId: ${CLIENTS.as.id}`,
    `      clientSecret: ${CLIENTS.as.secret}`,
    "      dpop: true",
  ].join("\n");
  const hub = new Hub({
    config: parseConfig(yaml, { source: join(dir, "mcplex.yaml"), env: {} }),
    oauth: { store },
  });
  hubs.push(hub);
  await hub.start();
  const tool = hub.tools().find((t) => t.originalName === "whoami");
  if (tool === undefined) throw new Error(`billing is not ready: ${hub.servers()[0]?.error}`);
  const result = await hub.callTool(tool.name, {});
  expect(result.isError ?? false).toBe(false);
  await hub.close();
}

async function storedThumbprint(): Promise<string | undefined> {
  const record = await store.load("billing");
  return record?.dpop === undefined ? undefined : (await openDpopKey(record.dpop)).thumbprint;
}

describe("DPoP key in the secret store", () => {
  it("binds the token to a key kept sealed in the store and presents it as DPoP", async () => {
    await run();
    const thumbprint = await storedThumbprint();
    expect(thumbprint).toBeDefined();
    expect(auth.tokenRequests.at(-1)).toMatchObject({ grant: "client_credentials", jkt: thumbprint });
    expect(auth.presented.at(-1)).toEqual({ scheme: "DPoP", jkt: thumbprint });

    // Sealed: neither the private key nor the token is in the store file in the clear.
    const record = await store.load("billing");
    const sealed = await readFile(secrets.file, "utf8");
    expect(typeof record?.dpop?.privateJwk.d).toBe("string");
    expect(sealed).not.toContain(record?.dpop?.privateJwk.d);
    expect(sealed).not.toContain(record?.tokens?.access_token);
  });

  it("reuses the stored key and its token in the next run", async () => {
    const thumbprint = await storedThumbprint();
    const requests = auth.tokenRequests.length;
    await run();
    // No new token: the stored one was presented, with proofs of the stored key.
    expect(auth.tokenRequests.length).toBe(requests);
    expect(auth.presented.at(-1)).toEqual({ scheme: "DPoP", jkt: thumbprint });
    expect(await storedThumbprint()).toBe(thumbprint);
  });

  it("rotates to a new key, drops the tokens bound to the old one, and the next run binds to the new", async () => {
    const old = await storedThumbprint();
    const rotated = await rotateDpopKey(store, "billing");
    expect(rotated.previous).toBe(old);
    expect(rotated.thumbprint).not.toBe(old);
    const record = await store.load("billing");
    expect(record?.tokens).toBeUndefined();
    expect(await storedThumbprint()).toBe(rotated.thumbprint);

    const requests = auth.tokenRequests.length;
    await run();
    expect(auth.tokenRequests.slice(requests).map((r) => r.jkt)).toEqual([rotated.thumbprint]);
    expect(auth.presented.at(-1)).toEqual({ scheme: "DPoP", jkt: rotated.thumbprint });
  });
});
