import { copyFile, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SecretStore } from "../../src/config/secret-store.js";
import { FileCredentialVault } from "../../src/credentials/file-credential-vault.js";

// The files under test/fixtures/sealed-files/ were written by the secret store and the file
// credential vault of commit 3e5a52a: a store's and a vault's file on disk must keep opening,
// and keep their layout when changed, with every later mcplex. Their keys are these test-only
// values, given as MCPLEX_SECRET_KEY (a raw key, and a passphrase).
const FIXTURES = resolve("test/fixtures/sealed-files");
const RAW = { MCPLEX_SECRET_KEY: "0f".repeat(32) };
const PASSPHRASE = { MCPLEX_SECRET_KEY: "fixture passphrase of mcplex 1" };

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-sealed-files-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A copy of a fixture in the test's directory, to change without touching the fixture. */
async function copyOf(name: string): Promise<string> {
  const file = join(dir, name);
  await copyFile(join(FIXTURES, name), file);
  return file;
}

describe("a secret store written by an earlier mcplex", () => {
  it("opens with a raw key and with a passphrase", async () => {
    const raw = new SecretStore({ file: join(FIXTURES, "secrets-raw-key.enc"), env: RAW });
    expect(Object.fromEntries(await raw.readAll())).toEqual({
      github: "ghp_fixtureRawKey1",
      "anthropic.key": "sk-ant-fixture øæå ✓",
    });
    const pass = new SecretStore({ file: join(FIXTURES, "secrets-passphrase.enc"), env: PASSPHRASE });
    expect(await pass.get("github")).toBe("ghp_fixturePassphrase2");
  });

  it("takes changes, keeping its secrets, its key derivation and its layout", async () => {
    const file = await copyOf("secrets-passphrase.enc");
    const before = JSON.parse(await readFile(file, "utf8"));
    await new SecretStore({ file, env: PASSPHRASE }).set("added", "value-added-1");
    const store = new SecretStore({ file, env: PASSPHRASE });
    expect(await store.get("github")).toBe("ghp_fixturePassphrase2");
    expect(await store.get("added")).toBe("value-added-1");
    const text = await readFile(file, "utf8");
    const after = JSON.parse(text);
    expect(Object.keys(after)).toEqual(["format", "version", "kdf", "check", "iv", "tag", "data"]);
    expect(after.kdf).toEqual(before.kdf);
    expect(after.check).toBe(before.check);
    expect(text).toBe(`${JSON.stringify(after, null, 2)}\n`);
  });
});

describe("a credential vault written by an earlier mcplex", () => {
  it("opens with a raw key and with a passphrase", async () => {
    const vault = new FileCredentialVault({ file: join(FIXTURES, "credentials.json"), env: RAW });
    expect(await vault.users()).toEqual(["user-a", "user-b"]);
    expect(await vault.servers("user-a")).toEqual(["github", "notion"]);
    expect(await vault.get("user-a", "github")).toEqual({
      oauth: {
        tokens: { access_token: "at-fixture-1", token_type: "Bearer", refresh_token: "rt-fixture-1" },
      },
      connectedAt: 1700000000001,
    });
    expect(await vault.get("user-a", "notion")).toEqual({
      values: { NOTION_KEY: "nk-fixture-2" },
      connectedAt: 5,
    });
    expect(await vault.get("user-b", "github")).toEqual({
      oauth: { tokens: { access_token: "at-fixture-3", token_type: "Bearer" } },
      connectedAt: 1700000000003,
    });
    const pass = new FileCredentialVault({
      file: join(FIXTURES, "credentials-passphrase.json"),
      env: PASSPHRASE,
    });
    expect(await pass.get("user-a", "github")).toEqual({
      values: { API_KEY: "value-fixture-4" },
      connectedAt: 7,
    });
  });

  it("takes changes, keeping the other records, its key derivation and its layout", async () => {
    const file = await copyOf("credentials.json");
    const before = JSON.parse(await readFile(file, "utf8"));
    await new FileCredentialVault({ file, env: RAW }).delete("user-b");
    const vault = new FileCredentialVault({ file, env: RAW });
    expect(await vault.users()).toEqual(["user-a"]);
    expect(await vault.get("user-a", "notion")).toEqual({
      values: { NOTION_KEY: "nk-fixture-2" },
      connectedAt: 5,
    });
    const text = await readFile(file, "utf8");
    const after = JSON.parse(text);
    expect(Object.keys(after)).toEqual(["format", "version", "kdf", "check", "records"]);
    expect(after.records["user-a"]).toEqual(before.records["user-a"]);
    expect(after.check).toBe(before.check);
    expect(text).toBe(`${JSON.stringify(after)}\n`);
  });
});
